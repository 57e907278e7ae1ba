import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { badRequest, conflict } from '@trellis/common';
import { ClusterEntity, NodeEntity, ProfileEntity } from '@trellis/persistence/entities';
import { requireVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import { checkKeys, checkName, envelope, mapField, type Json } from '../shared/body';
import { parseListQuery, runList } from '../shared/list-query';
import { mustFind } from '../shared/lookup';
import { profileView } from '../shared/views';
import { PROFILE_TYPES } from './profile-types';
import { ProfileCloudCheck } from './profile-cloud-check';

const LIST = { filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] } as const;

@Injectable()
export class ProfilesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cloud: ProfileCloudCheck,
  ) {}

  async create(req: ApiRequest, body: unknown) {
    const input = envelope(body, 'profile');
    checkKeys(input, ['name', 'spec', 'metadata'], ['name', 'spec']);
    const name = checkName(input.name);
    const metadata = mapField(input, 'metadata') ?? {};
    const validated = PROFILE_TYPES.validate(input.spec, name);
    await this.cloud.check(req.caller.token, validated);
    const now = new Date();
    const row: ProfileEntity = {
      id: randomUUID(),
      name,
      type: validated.type,
      spec: input.spec as Json,
      metadata,
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
    const input = envelope(body, 'profile');
    checkKeys(input, ['spec'], ['spec']);
    const validated = PROFILE_TYPES.validate(input.spec);
    await this.cloud.check(req.caller.token, validated);
    return {
      profile: {
        ...profileView({
          id: null as unknown as string,
          name: 'validated_profile',
          type: validated.type,
          spec: input.spec as Json,
          metadata: {},
          project: req.caller.projectId,
          user: req.caller.userId,
          domain: req.caller.domainId,
          created_at: null as unknown as Date,
          updated_at: null,
        }),
      },
    };
  }

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const qb = this.uow.manager.getRepository(ProfileEntity).createQueryBuilder('p');
    if (q.filters.name) qb.andWhere('p.name IN (:...names)', { names: q.filters.name });
    if (q.filters.type) qb.andWhere('p.type IN (:...types)', { types: q.filters.type });
    const rows = await runList(qb, q, req.caller, [{ key: 'created_at', dir: 'ASC' }]);
    return { profiles: rows.map(profileView) };
  }

  async get(req: ApiRequest, identity: string) {
    return { profile: profileView(await this.find(req, identity)) };
  }

  async update(req: ApiRequest, identity: string, body: unknown) {
    const input = envelope(body, 'profile', "Malformed request data, missing 'profile' key in request body.");
    checkKeys(input, ['name', 'metadata']);
    const profile = await this.find(req, identity);
    let changed = false;
    if (input.name !== undefined && input.name !== null) {
      const name = checkName(input.name);
      if (name !== profile.name) {
        profile.name = name;
        changed = true;
      }
    }
    const metadata = mapField(input, 'metadata');
    if (metadata !== null && JSON.stringify(metadata) !== JSON.stringify(profile.metadata)) {
      profile.metadata = metadata;
      changed = true;
    }
    if (!changed) throw badRequest('No property needs an update.');
    profile.updated_at = new Date();
    await this.uow.manager.getRepository(ProfileEntity).save(profile);
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
