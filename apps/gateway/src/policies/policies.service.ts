import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, badRequest, conflict, unavailable } from '@trellis/common';
import { CLOUD_WIDE_PROJECT } from '@trellis/contracts';
import { CloudFactEntity, ClusterPolicyEntity, PolicyEntity } from '@trellis/persistence/entities';
import { requireVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { POLICY_REGISTRY } from '../core/tokens';
import {
  CloudFactMissingError,
  PolicyRegistry,
  PolicySpecError,
  validatePolicySpec,
  type CloudFacts,
} from '../infra/policies.adapter';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import type { Json } from '../shared/body';
import { parseListQuery, runList } from '../shared/list-query';
import { mustFind } from '../shared/lookup';
import { policyView } from '../shared/views';
import type { EntityManager } from 'typeorm';
import { PolicyCreateBody, PolicyUpdateBody, PolicyValidateBody } from './policy.shapes';

const LIST = { filters: ['name', 'type'], sortKeys: ['type', 'name', 'created_at', 'updated_at'] } as const;
const FACT_KINDS = ['availability_zones', 'hypervisors', 'server_groups'] as const;

@Injectable()
export class PoliciesService {
  constructor(
    private readonly uow: UnitOfWork,
    @Inject(POLICY_REGISTRY) private readonly registry: PolicyRegistry,
  ) {}

  async create(req: ApiRequest, body: unknown) {
    const { name, spec } = PolicyCreateBody.parse(body);
    const cloud = await loadCloudFacts(this.uow.manager, req.caller.projectId);
    const typeName = this.validate(spec, cloud, name);
    const now = new Date();
    const row: PolicyEntity = {
      id: randomUUID(),
      name,
      type: typeName,
      spec: spec as Json,
      data: {},
      project: req.caller.projectId,
      user: req.caller.userId,
      domain: req.caller.domainId,
      created_at: now,
      updated_at: null,
    };
    await insertRow(this.uow.manager, PolicyEntity, row);
    return { policy: policyView(row) };
  }

  async validateOnly(req: ApiRequest, body: unknown) {
    requireVersion(req.version, '1.2');
    const { spec } = PolicyValidateBody.parse(body);
    const typeName = this.validate(spec, null, null);
    const view = policyView({
      id: null,
      name: 'validated_policy',
      type: typeName,
      spec: spec as Json,
      data: {},
      project: req.caller.projectId,
      user: req.caller.userId,
      domain: req.caller.domainId,
      created_at: null,
      updated_at: null,
    });
    return { policy: view };
  }

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const qb = this.uow.manager.getRepository(PolicyEntity).createQueryBuilder('p');
    if (q.filters.name) qb.andWhere('p.name IN (:...names)', { names: q.filters.name });
    if (q.filters.type) qb.andWhere('p.type IN (:...types)', { types: q.filters.type });
    const rows = await runList(qb, q, req.caller, [{ key: 'created_at', dir: 'ASC' }]);
    return { policies: rows.map((p) => policyView(p)) };
  }

  async get(req: ApiRequest, identity: string) {
    return { policy: policyView(await this.find(this.uow.manager, req, identity)) };
  }

  async update(req: ApiRequest, identity: string, body: unknown) {
    const { name } = PolicyUpdateBody.parse(body);
    const policy = await this.find(this.uow.manager, req, identity);
    if (name === policy.name) throw badRequest('No property needs an update.');
    policy.name = name;
    policy.updated_at = new Date();
    await this.uow.manager.getRepository(PolicyEntity).update({ id: policy.id }, { name, updated_at: policy.updated_at });
    return { policy: policyView(policy) };
  }

  async remove(req: ApiRequest, identity: string): Promise<void> {
    await this.uow.run(async ({ manager }) => {
      const policy = await this.find(manager, req, identity);
      const attached = await manager.getRepository(ClusterPolicyEntity).countBy({ policy_id: policy.id });
      if (attached > 0) {
        throw conflict(`The policy '${identity}' cannot be deleted: still attached to some clusters.`, 'ResourceInUse');
      }
      await manager.getRepository(PolicyEntity).delete({ id: policy.id });
    });
  }

  private validate(spec: unknown, cloud: CloudFacts | null, name: string | null): string {
    try {
      return validatePolicySpec(spec, { registry: this.registry, cloud, name }).typeName;
    } catch (e) {
      if (e instanceof PolicySpecError) {
        if (e.status === 404) throw new DomainError('NOT_FOUND', e.message, 'ResourceNotFound');
        throw new DomainError('INVALID_SPEC', e.message, e.type);
      }
      if (e instanceof CloudFactMissingError) {
        throw unavailable(`${e.message.replace('The snapshot has', 'Trellis has')} The nova-worker reports it; try again shortly.`);
      }
      throw e;
    }
  }

  private find(manager: EntityManager, req: ApiRequest, identity: string): Promise<PolicyEntity> {
    return mustFind(manager, PolicyEntity, 'policy', identity, { project: req.caller.projectId });
  }
}

/**
 * The Nova facts the nova-worker last stored. It stores each kind as `{items}`, or `{items: [],
 * error}` when Nova would not tell; a kind it has not stored or could not read stays absent, so a
 * policy that needs it is refused with 503 rather than validated against an empty list.
 */
async function loadCloudFacts(manager: EntityManager, project: string): Promise<CloudFacts> {
  // the cloud-wide facts and the caller's project's (its server groups); the project's own row last,
  // so it wins over a cloud-wide row of the same kind
  const rows = await manager.getRepository(CloudFactEntity).find({
    where: [{ project: CLOUD_WIDE_PROJECT }, { project }],
    order: { project: 'ASC' },
  });
  const facts: CloudFacts = {};
  for (const row of rows) {
    if (!(FACT_KINDS as readonly string[]).includes(row.kind)) continue;
    const data = row.data as { items?: unknown; error?: unknown } | null;
    if (data && Array.isArray(data.items) && data.error === undefined) {
      (facts as Record<string, unknown>)[row.kind] = data.items;
    }
  }
  return facts;
}
