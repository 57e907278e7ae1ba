import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { badRequest, conflict } from '@trellis/common';
import { ClusterEntity, NodeEntity, ProfileEntity } from '@trellis/persistence/entities';
import { ActionSubmitter } from '../actions/action-submitter';
import type { Accepted } from '../clusters/clusters.service';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { ApiRequest } from '../core/request.decorators';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import { toBool } from '../shared/body';
import { parseListQuery, runList } from '../shared/list-query';
import { NodeStatuses } from '@trellis/contracts';
import { HostVisibility } from '../shared/host-visibility';
import { mustBuildNodes } from '../profiles/profile-types';
import { lookup, mustFind } from '../shared/lookup';
import { nodeView, recordedServerDetails } from '../shared/views';
import { In, type EntityManager } from 'typeorm';
import { nodeActionTimeout } from './node-timeout';
import { NodeCreateBody, NodeUpdateBody } from './node.shapes';
import type { NodeEnvelope } from '../shared/views';
import type { OutOf } from '../shapes/response';

const LIST = {
  filters: ['cluster_id', 'name', 'status'],
  sortKeys: ['index', 'name', 'status', 'init_at', 'created_at', 'updated_at'],
  enums: { status: [...new Set([...NodeStatuses, 'RECOVERING'])] },
} as const;

const BUSY_STATUSES = ['CREATING', 'UPDATING', 'DELETING', 'RECOVERING'];

@Injectable()
export class NodesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly submitter: ActionSubmitter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly hosts: HostVisibility,
  ) {}

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, { ...LIST, extra: ['show_details'] }, req);
    const manager = this.uow.manager;
    const qb = manager.getRepository(NodeEntity).createQueryBuilder('n');
    if (q.filters.cluster_id) {
      const ids: string[] = [];
      for (const identity of q.filters.cluster_id) {
        const cluster = await lookup(manager, ClusterEntity, identity, { project: q.globalProject ? null : req.caller.projectId });
        if (!cluster) throw badRequest(`Cannot find the given cluster: ${identity}.`);
        ids.push(cluster.id);
      }
      qb.andWhere('n.cluster_id IN (:...clusterIds)', { clusterIds: ids });
    }
    if (q.filters.name) qb.andWhere('n.name IN (:...names)', { names: q.filters.name });
    if (q.filters.status) qb.andWhere('n.status IN (:...statuses)', { statuses: q.filters.status });
    const rows = await runList(qb, q, req.caller, [{ key: 'init_at', dir: 'ASC' }]);
    return { nodes: await this.views(manager, req, rows) };
  }

  async get(req: ApiRequest, identity: string, query: Record<string, unknown>) {
    const node = await mustFind(this.uow.manager, NodeEntity, 'node', identity, { project: req.caller.projectId });
    const details = query.show_details !== undefined && toBool(query.show_details);
    const [view] = await this.views(this.uow.manager, req, [node], details);
    return { node: view };
  }

  async create(req: ApiRequest, body: unknown): Promise<Accepted<OutOf<typeof NodeEnvelope>>> {
    const { name, profile_id: profileId, cluster_id: clusterIdentity, role, metadata } = NodeCreateBody.parse(body);
    const scope = { project: req.caller.projectId };
    return this.uow.run(async (tx) => {
      const { manager } = tx;
      const profile = await lookup(manager, ProfileEntity, profileId, scope);
      if (!profile) throw badRequest(`The specified profile '${profileId}' could not be found.`);
      let cluster: ClusterEntity | null = null;
      let index = -1;
      if (clusterIdentity) {
        cluster = await lookup(manager, ClusterEntity, clusterIdentity, scope);
        if (!cluster) throw badRequest(`The specified cluster '${clusterIdentity}' could not be found.`);
        const clusterProfile = await manager.getRepository(ProfileEntity).findOneBy({ id: cluster.profile_id });
        if (clusterProfile?.type !== profile.type) {
          throw badRequest('Node and cluster have different profile type, operation aborted.');
        }
        // The cluster row is locked for the rest of the transaction, so no two nodes get one index.
        const [locked] = (await manager.query('SELECT next_index FROM clusters WHERE id = $1 FOR UPDATE', [cluster.id])) as Array<{
          next_index: number;
        }>;
        index = Number(locked.next_index);
        await manager.getRepository(ClusterEntity).update({ id: cluster.id }, { next_index: index + 1 });
      }
      mustBuildNodes(profile);
      const node: NodeEntity = {
        id: randomUUID(),
        name,
        cluster_id: cluster?.id ?? null,
        profile_id: profile.id,
        project: req.caller.projectId,
        user: req.caller.userId,
        domain: req.caller.domainId,
        physical_id: null,
        index,
        role,
        status: 'INIT',
        status_reason: 'Initializing',
        data: {},
        metadata: metadata ?? {},
        tainted: false,
        init_at: new Date(),
        created_at: null,
        updated_at: null,
        action_id: null,
        lease_owner: null,
        lease_expires_at: null,
        build_deadline: null,
      };
      await insertRow(manager, NodeEntity, node);
      const action = await this.submitter.submit(tx, req, {
        action: 'NODE_CREATE',
        target: node.id,
        clusterId: node.cluster_id,
        inputs: {},
        timeout: cluster?.timeout ?? this.config.defaultActionTimeout,
      });
      await manager.getRepository(NodeEntity).update({ id: node.id }, { action_id: action.id });
      node.action_id = action.id;
      const [view] = await this.views(manager, req, [node]);
      return { body: { node: view }, actionId: action.id };
    });
  }

  async update(req: ApiRequest, identity: string, body: unknown): Promise<Accepted<OutOf<typeof NodeEnvelope>>> {
    const { name, profile_id: profileId, role, metadata, tainted } = NodeUpdateBody.parse(body, { version: req.version });
    const scope = { project: req.caller.projectId };
    return this.uow.run(async (tx) => {
      const { manager } = tx;
      const node = await mustFind(manager, NodeEntity, 'node', identity, scope);
      const inputs: Record<string, unknown> = {};
      if (profileId !== null) {
        const profile = await lookup(manager, ProfileEntity, profileId, scope);
        if (!profile) throw badRequest(`The specified profile '${profileId}' could not be found.`);
        if (profile.id !== node.profile_id) {
          const current = await manager.getRepository(ProfileEntity).findOneBy({ id: node.profile_id });
          if (current && current.type !== profile.type) {
            throw badRequest('Cannot update a node to a different profile type, operation aborted.');
          }
          inputs.new_profile_id = profile.id;
        }
      }
      if (name !== null && name !== node.name) inputs.name = name;
      if (role !== null && role !== node.role) inputs.role = role;
      if (metadata !== null && JSON.stringify(metadata) !== JSON.stringify(node.metadata)) inputs.metadata = metadata;
      if (tainted !== null && tainted !== node.tainted) inputs.tainted = tainted;
      if (Object.keys(inputs).length === 0) throw badRequest('No property needs an update.');
      const action = await this.submitter.submit(tx, req, {
        action: 'NODE_UPDATE',
        target: node.id,
        clusterId: node.cluster_id,
        inputs,
        timeout: await this.timeoutOf(manager, node),
      });
      const [view] = await this.views(manager, req, [node]);
      return { body: { node: view }, actionId: action.id };
    });
  }

  async remove(req: ApiRequest, identity: string, query: Record<string, unknown>): Promise<string> {
    const force = req.version.atLeast('1.8') && query.force !== undefined ? toBool(query.force) : false;
    return this.uow.run(async (tx) => {
      const node = await mustFind(tx.manager, NodeEntity, 'node', identity, { project: req.caller.projectId });
      if (!force && BUSY_STATUSES.includes(node.status)) {
        throw conflict(`The node '${identity}' is in status ${node.status}.`, 'ActionInProgress');
      }
      const action = await this.submitter.submit(tx, req, {
        action: 'NODE_DELETE',
        target: node.id,
        clusterId: node.cluster_id,
        inputs: force ? { force: true } : {},
        timeout: await this.timeoutOf(tx.manager, node),
      });
      return action.id;
    });
  }

  private timeoutOf(manager: EntityManager, node: NodeEntity): Promise<number> {
    return nodeActionTimeout(manager, node, this.config.defaultActionTimeout);
  }

  /** The nodes as the caller may see them: placement hosts as hostIds unless an admin asks. */
  private async views(manager: EntityManager, req: ApiRequest, nodes: NodeEntity[], details = false) {
    const profileIds = [...new Set(nodes.map((n) => n.profile_id))];
    const profiles = profileIds.length
      ? await manager.getRepository(ProfileEntity).find({ select: { id: true, name: true }, where: { id: In(profileIds) } })
      : [];
    const names = new Map(profiles.map((p) => [p.id, p.name]));
    const show = await this.hosts.forCaller(manager, req.caller);
    return nodes.map((n) => {
      const view = nodeView(n, names.get(n.profile_id) ?? null, req.version);
      if (details) {
        // The gateway never calls Nova: details are what the worker recorded about the server.
        view.details = recordedServerDetails(n);
      }
      return show(view, n.project);
    });
  }
}
