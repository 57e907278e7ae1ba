import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ListQuery, NotFound, Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { DomainError } from '@trellis/common';
import { ClusterEntity, ClusterPolicyEntity, PolicyEntity } from '@trellis/persistence/entities';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { boolFilter, parseListQuery } from '../shared/list-query';
import { mustFind } from '../shared/lookup';
import { ClusterPolicyEnvelope, ClusterPolicyList, bindingView } from '../shared/views';
import { Operation } from '../core/policy.guard';

const LIST = { filters: ['enabled', 'policy_name', 'policy_type'], sortKeys: ['enabled'], paging: false } as const;

@ApiTags('clusters')
@SenlinApi()
@Controller('v1/clusters/:cluster_id/policies')
export class ClusterPoliciesController {
  constructor(private readonly uow: UnitOfWork) {}

  @Get()
  @Operation('cluster_policies:index')
  @Ok(ClusterPolicyList)
  @ListQuery({ filters: LIST.filters, sortKeys: LIST.sortKeys, paging: false })
  @NotFound()
  async list(@Ctx() req: ApiRequest, @Param('cluster_id') clusterId: string, @Query() query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const enabled = boolFilter(q, 'enabled');
    const manager = this.uow.manager;
    const cluster = await mustFind(manager, ClusterEntity, 'cluster', clusterId, { project: req.caller.projectId });
    const qb = manager
      .getRepository(ClusterPolicyEntity)
      .createQueryBuilder('b')
      .innerJoinAndMapOne('b.policy', PolicyEntity, 'p', 'p.id = b.policy_id')
      .where('b.cluster_id = :id', { id: cluster.id });
    if (enabled !== null) qb.andWhere('b.enabled = :enabled', { enabled });
    if (q.filters.policy_name) qb.andWhere('p.name IN (:...names)', { names: q.filters.policy_name });
    if (q.filters.policy_type) qb.andWhere('p.type IN (:...types)', { types: q.filters.policy_type });
    q.sort.forEach((s, i) => (i === 0 ? qb.orderBy('b.enabled', s.dir) : qb.addOrderBy('b.enabled', s.dir)));
    qb.addOrderBy('b.priority', 'ASC').addOrderBy('b.attached_at', 'ASC').addOrderBy('b.id', 'ASC');
    const rows = (await qb.getMany()) as Array<ClusterPolicyEntity & { policy: PolicyEntity }>;
    return { cluster_policies: rows.map((b) => bindingView(b, cluster, b.policy)) };
  }

  @Get(':policy_id')
  @Operation('cluster_policies:get')
  @Ok(ClusterPolicyEnvelope)
  @NotFound()
  async show(@Ctx() req: ApiRequest, @Param('cluster_id') clusterId: string, @Param('policy_id') policyId: string) {
    const manager = this.uow.manager;
    const scope = { project: req.caller.projectId };
    const cluster = await mustFind(manager, ClusterEntity, 'cluster', clusterId, scope);
    const policy = await mustFind(manager, PolicyEntity, 'policy', policyId, scope);
    const binding = await manager.getRepository(ClusterPolicyEntity).findOneBy({ cluster_id: cluster.id, policy_id: policy.id });
    if (!binding) {
      throw new DomainError(
        'NOT_FOUND',
        `The policy '${policyId}' is not found attached to the specified cluster '${clusterId}'.`,
        'PolicyBindingNotFound',
      );
    }
    return { cluster_policy: bindingView(binding, cluster, policy) };
  }
}
