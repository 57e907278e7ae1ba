import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { badRequest, conflict } from '@trellis/common';
import { ClusterEntity, NodeEntity, ProfileEntity, row } from '@trellis/persistence/entities';
import { requireVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import type { Json } from '../shared/body';
import { parseListQuery, runList } from '../shared/list-query';
import { mustFind } from '../shared/lookup';
import { profileView } from '../shared/views';
import { PROFILE_TYPES } from './profile-types';
import { ProfileCloudCheck } from './profile-cloud-check';
import { ProfileCreateBody, ProfileUpdateBody, ProfileValidateBody } from './profile.shapes';

const LIST = { filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] } as const;

@Injectable()
export class ProfilesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cloud: ProfileCloudCheck,
  ) {}

  async create(req: ApiRequest, body: unknown) {
    const { name, spec, metadata } = ProfileCreateBody.parse(body);
    const validated = PROFILE_TYPES.validate(spec, name);
    await this.cloud.check(req.caller.token, validated);
    const now = new Date();
    const row: ProfileEntity = {
      id: randomUUID(),
      name,
      type: validated.type,
      spec: spec as Json,
      metadata: metadata ?? {},
      project: req.caller.projectId,
      user: req.caller.userId,
      domain: req.caller.domainId,
      created_at: now,
      updated_at: null,
    };
    await insertRow(this.uow.manager, ProfileEntity, row);
    return { profile: profileView(row) };
  }

  async validate(req: ApiRequest, body: unknown) {
    requireVersion(req.version, '1.2');
    const { spec } = ProfileValidateBody.parse(body);
    const validated = PROFILE_TYPES.validate(spec);
    await this.cloud.check(req.caller.token, validated);
    return {
      profile: profileView({
        id: null,
        name: 'validated_profile',
        type: validated.type,
        spec: spec as Json,
        metadata: {},
        project: req.caller.projectId,
        user: req.caller.userId,
        domain: req.caller.domainId,
        created_at: null,
        updated_at: null,
      }),
    };
  }

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const qb = this.uow.manager.getRepository(ProfileEntity).createQueryBuilder('p');
    if (q.filters.name) qb.andWhere('p.name IN (:...names)', { names: q.filters.name });
    if (q.filters.type) qb.andWhere('p.type IN (:...types)', { types: q.filters.type });
    const rows = await runList(qb, q, req.caller, [{ key: 'created_at', dir: 'ASC' }]);
    return { profiles: rows.map((p) => profileView(p)) };
  }

  async get(req: ApiRequest, identity: string) {
    return { profile: profileView(await this.find(req, identity)) };
  }

  async update(req: ApiRequest, identity: string, body: unknown) {
    const raw = ProfileUpdateBody.open(body);
    const profile = await this.find(req, identity);
    const { name, metadata } = ProfileUpdateBody.read(raw);
    let changed = false;
    if (name !== null && name !== profile.name) {
      profile.name = name;
      changed = true;
    }
    if (metadata !== null && JSON.stringify(metadata) !== JSON.stringify(profile.metadata)) {
      profile.metadata = metadata;
      changed = true;
    }
    if (!changed) throw badRequest('No property needs an update.');
    profile.updated_at = new Date();
    // an UPDATE of the fields, not save(), whose deep compare of the metadata calls each object's
    // hasOwnProperty: a key of that name in the user's metadata made it throw (receivers.service.ts)
    await this.uow.manager
      .getRepository(ProfileEntity)
      .update({ id: profile.id }, row<ProfileEntity>({ name: profile.name, metadata: profile.metadata, updated_at: profile.updated_at }));
    return { profile: profileView(profile) };
  }

  async remove(req: ApiRequest, identity: string): Promise<void> {
    await this.uow.run(async ({ manager }) => {
      const profile = await mustFind(manager, ProfileEntity, 'profile', identity, { project: req.caller.projectId });
      const clusters = await manager.getRepository(ClusterEntity).countBy({ profile_id: profile.id });
      const nodes = await manager.getRepository(NodeEntity).countBy({ profile_id: profile.id });
      if (clusters + nodes > 0) {
        throw conflict(
          `The profile '${identity}' cannot be deleted: still referenced by some clusters and/or nodes.`,
          'ResourceInUse',
        );
      }
      await manager.getRepository(ProfileEntity).delete({ id: profile.id });
    });
  }

  private find(req: ApiRequest, identity: string): Promise<ProfileEntity> {
    return mustFind(this.uow.manager, ProfileEntity, 'profile', identity, { project: req.caller.projectId });
  }
}
