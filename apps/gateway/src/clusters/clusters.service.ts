import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, badRequest, conflict } from '@trellis/common';
import { ClusterEntity, ProfileEntity } from '@trellis/persistence/entities';
import { ActionSubmitter } from '../actions/action-submitter';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { ApiRequest } from '../core/request.decorators';
import { checkSizeParams } from '../infra/policies.adapter';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import { boolParam } from '../shared/body';
import { parseListQuery, runList } from '../shared/list-query';
import { ClusterStatuses } from '@trellis/contracts';
import { mustBuildNodes } from '../profiles/profile-types';
import { lookup, mustFind } from '../shared/lookup';
import { clusterViewOf, clusterViews } from './cluster-views';
import { ClusterCreateBody, ClusterUpdateBody } from './cluster.shapes';
import type { ClusterEnvelope } from '../shared/views';
import type { OutOf } from '../shapes/response';

const LIST = {
  filters: ['name', 'status'],
  sortKeys: ['name', 'status', 'init_at', 'created_at', 'updated_at'],
  quoteUnknown: true,
  enums: { status: ClusterStatuses },
} as const;

/** Statuses in which a delete would trample a running operation (unless forced). */
const BUSY_STATUSES = ['CREATING', 'UPDATING', 'DELETING', 'RECOVERING'];

export interface Accepted<T> {
  body: T;
  actionId: string;
}

@Injectable()
export class ClustersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly submitter: ActionSubmitter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async create(req: ApiRequest, body: unknown): Promise<Accepted<OutOf<typeof ClusterEnvelope>>> {
    const limit = this.config.maxNodesPerCluster;
    const input = ClusterCreateBody.parse(body, { maxNodesPerCluster: limit });
    const { name, profile_id: profileId, min_size: minSize, max_size: maxSize } = input;
    const timeout = input.timeout ?? this.config.defaultActionTimeout;
    const metadata = input.metadata ?? {};
    const config = input.config ?? {};
    const desired = input.desired_capacity ?? minSize ?? 0;
    const sizes = { min: minSize ?? 0, max: maxSize ?? -1 };
    const sizeError = checkSizeParams({ min_size: 0, max_size: -1, desired_capacity: 0 }, desired, sizes.min, sizes.max, true, limit);
    if (sizeError) throw badRequest(sizeError);

    return this.uow.run(async (tx) => {
      const { manager } = tx;
      const profile = await lookup(manager, ProfileEntity, profileId, { project: req.caller.projectId });
      if (!profile) throw badRequest(`The specified profile '${profileId}' could not be found.`);
      mustBuildNodes(profile);
      const count = await manager.getRepository(ClusterEntity).countBy({ project: req.caller.projectId });
      if (count >= this.config.maxClustersPerProject) {
        throw new DomainError('INTERNAL', 'Quota exceeded for resources.', 'OverQuota');
      }
      const cluster: ClusterEntity = {
        id: randomUUID(),
        name,
        profile_id: profile.id,
        project: req.caller.projectId,
        user: req.caller.userId,
        domain: req.caller.domainId,
        init_at: new Date(),
        created_at: null,
        updated_at: null,
        min_size: sizes.min,
        max_size: sizes.max,
        desired_capacity: desired,
        timeout,
        status: 'INIT',
        status_reason: 'Initializing',
        metadata,
        data: {},
        config,
        next_index: 1,
      };
      await insertRow(manager, ClusterEntity, cluster);
      const action = await this.submitter.submit(tx, req, {
        action: 'CLUSTER_CREATE',
        target: cluster.id,
        clusterId: cluster.id,
        inputs: { desired_capacity: desired },
        timeout,
      });
      return { body: { cluster: await clusterViewOf(manager, cluster) }, actionId: action.id };
    });
  }

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const qb = this.uow.manager.getRepository(ClusterEntity).createQueryBuilder('c');
    if (q.filters.name) qb.andWhere('c.name IN (:...names)', { names: q.filters.name });
    if (q.filters.status) qb.andWhere('c.status IN (:...statuses)', { statuses: q.filters.status });
    const rows = await runList(qb, q, req.caller, [{ key: 'init_at', dir: 'ASC' }]);
    return { clusters: await clusterViews(this.uow.manager, rows) };
  }

  async get(req: ApiRequest, identity: string) {
    const cluster = await this.find(req, identity);
    return { cluster: await clusterViewOf(this.uow.manager, cluster) };
  }

  async update(req: ApiRequest, identity: string, body: unknown): Promise<Accepted<OutOf<typeof ClusterEnvelope>>> {
    const { name, profile_id: profileId, metadata, timeout, config, profile_only: profileOnly } = ClusterUpdateBody.parse(body);
    return this.uow.run(async (tx) => {
      const { manager } = tx;
      const cluster = await mustFind(manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
      if (cluster.status === 'ERROR') {
        throw conflict('Updating a cluster in error state is not supported.', 'FeatureNotSupported');
      }
      const inputs: Record<string, unknown> = {};
      if (profileId !== null) {
        const profile = await lookup(manager, ProfileEntity, profileId, { project: req.caller.projectId });
        if (!profile) throw badRequest(`The specified profile '${profileId}' could not be found.`);
        if (profile.id !== cluster.profile_id) {
          const current = await manager.getRepository(ProfileEntity).findOneBy({ id: cluster.profile_id });
          if (current && current.type !== profile.type) {
            throw badRequest('Cannot update a cluster to a different profile type, operation aborted.');
          }
          inputs.new_profile_id = profile.id;
        }
      }
      if (name !== null && name !== cluster.name) inputs.name = name;
      if (metadata !== null && JSON.stringify(metadata) !== JSON.stringify(cluster.metadata)) inputs.metadata = metadata;
      if (timeout !== null && timeout !== cluster.timeout) inputs.timeout = timeout;
      if (config !== null && JSON.stringify(config) !== JSON.stringify(cluster.config)) inputs.config = config;
      // Senlin checks profile_only at any version but drops it below 1.6 (ClusterUpdateRequest 1.1):
      // there the nodes are updated to the new profile too
      if (profileOnly !== null && inputs.new_profile_id !== undefined && req.version.atLeast('1.6')) inputs.profile_only = profileOnly;
      if (Object.keys(inputs).length === 0) throw badRequest('No property needs an update.');
      const action = await this.submitter.submit(tx, req, {
        action: 'CLUSTER_UPDATE',
        target: cluster.id,
        clusterId: cluster.id,
        inputs,
        timeout: cluster.timeout,
      });
      return { body: { cluster: await clusterViewOf(manager, cluster) }, actionId: action.id };
    });
  }

  async remove(req: ApiRequest, identity: string, query: Record<string, unknown>): Promise<string> {
    const force = req.version.atLeast('1.8') && query.force !== undefined ? boolParam(query.force, 'force') : false;
    return this.uow.run(async (tx) => {
      const cluster = await mustFind(tx.manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
      if (!force && BUSY_STATUSES.includes(cluster.status)) {
        throw conflict(`The cluster '${identity}' is in status ${cluster.status}.`, 'ActionInProgress');
      }
      const action = await this.submitter.submit(tx, req, {
        action: 'CLUSTER_DELETE',
        target: cluster.id,
        clusterId: cluster.id,
        inputs: force ? { force: true } : {},
        timeout: cluster.timeout,
      });
      return action.id;
    });
  }

  private find(req: ApiRequest, identity: string): Promise<ClusterEntity> {
    return mustFind(this.uow.manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
  }
}
