import { Inject, Injectable } from '@nestjs/common';
import { badRequest, conflict, notFound } from '@trellis/common';
import { ClusterEntity, ClusterPolicyEntity, NodeEntity, PolicyEntity, ProfileEntity } from '@trellis/persistence/entities';
import { In } from 'typeorm';
import type { ClusterActionName } from '@trellis/contracts';
import { ActionSubmitter, type EarlyChecks } from '../actions/action-submitter';
import type { SeenTrust, TrustCheck } from '../trusts/trust-broker';
import { DecisionsService } from '../decisions/decisions.service';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { ApiRequest } from '../core/request.decorators';
import { CHANGE_IN_PERCENTAGE, checkResizeParams, checkResizeRequest, checkScaleRequest, checkSizeParams } from '../infra/policies.adapter';
import { UnitOfWork, type Tx } from '../infra/unit-of-work';
import { pyList, show, type Json } from '../shared/body';
import { PROFILE_TYPE_NOVA_SERVER } from '@trellis/contracts';
import { requireVersion } from '../core/api-version';
import { PROFILE_TYPES } from '../profiles/profile-types';
import { ClusterOperationRequest } from './cluster-operation.shapes';
import { lookup, lookupMany, mustFind } from '../shared/lookup';
import { isUuid } from '../shared/list-query';
import { Holds } from '../shared/holds';
import { findByIdWith } from '../infra/persistence.adapter';
import {
  AddNodesAction,
  ClusterActionRequest,
  CompleteLifecycleAction,
  DelNodesAction,
  PolicyAttachAction,
  PolicyDetachAction,
  PolicyUpdateAction,
  RECOVERY_OPERATIONS,
  RecoverAction,
  ReplaceNodesAction,
  ResizeAction,
  ScaleAction,
} from './cluster.shapes';

export { MAX_NODES_PER_REQUEST } from './cluster.shapes';

/** The keys `POST /v1/clusters/{id}/actions` takes; RPC serves each as `cluster.<key>`. */
export const CLUSTER_ACTION_KEYS = ClusterActionRequest.keys;
type ActionKey = (typeof CLUSTER_ACTION_KEYS)[number];

interface Planned {
  action: ClusterActionName;
  inputs: Record<string, unknown>;
}

/**
 * POST /v1/clusters/{id}/actions: Senlin's synchronous request checks (senlin-api §5.5), then one
 * READY action plus its outbox row. The engine does the rest.
 */
@Injectable()
export class ClusterActionsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly submitter: ActionSubmitter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly decisions: DecisionsService,
  ) {}

  /** per cluster, the scaling request of this gateway that checks it or acts on it (perform) */
  private readonly passed = new Holds();

  /**
   * `?dry_run=true`: the same request checks, then the decision the engine would make — plan and
   * trace — without storing an action or touching Nova.
   */
  async dryRun(req: ApiRequest, identity: string, body: unknown) {
    const [key, data] = pickAction(body, req);
    if (key === 'complete_lifecycle') throw badRequest('complete_lifecycle changes no cluster: there is nothing to decide.', 'HTTPBadRequest');
    return this.uow.run(async (tx) => {
      const cluster = await mustFind(tx.manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
      const planned = await this.plan(tx, req, cluster, identity, key, data);
      return this.decisions.dryRun(tx.manager, req, {
        action: planned.action,
        target: cluster.id,
        clusterId: cluster.id,
        inputs: planned.inputs,
        timeout: cluster.timeout,
      });
    });
  }

  /** `read`: the cluster as the caller has just read it (a webhook's), so the early refusals need not read it again */
  async perform(req: ApiRequest, identity: string, body: unknown, read?: ClusterEntity): Promise<string> {
    const [key, data] = pickAction(body, req);
    if (key === 'complete_lifecycle') return this.completeLifecycle(req, data);
    // Scaling is what alarms send, many at once and again while the first runs: the refusals are
    // found on committed rows first, in the order the locked path would find them (not found,
    // bad request, limits, conflicts), so they never queue for the cluster's lock.
    if (key !== 'scale_out' && key !== 'scale_in') return this.submit(req, identity, key, data, false);
    if (this.uow.inJoinedTransaction) {
      // an RPC write's (or a REST request's with an Idempotency-Key): after the key's claim, in its transaction
      await this.refuseEarly(req, identity, key, data, read);
      return this.submit(req, identity, key, data, true);
    }
    // A storm's repeats for one cluster would all pass the early checks while the first is still
    // running (it has not committed), then queue on the cluster's row lock, each in a transaction
    // of its own, to be refused under it. So in this gateway a request checks a cluster nobody
    // holds holding it, until it is refused or its transaction ends; the requests that find it
    // held wait, holding nothing, and then check all at once (one holds it again): the action is
    // committed by then, and they are refused in one statement each. One that passes without
    // holding it takes it before going on, or waits and checks again.
    const cluster = `${req.caller.projectId}/${identity}`;
    for (;;) {
      await this.passed.free(cluster);
      let release = this.passed.take(cluster);
      try {
        await this.refuseEarly(req, identity, key, data, read);
        release ??= this.passed.take(cluster);
        if (release) return await this.submit(req, identity, key, data, true);
      } finally {
        release?.();
      }
    }
  }

  /**
   * POST /v1/clusters/{id}/ops (>= 1.4), Senlin's cluster_op: the cluster's profile type must have
   * the operation, its params that operation's schema, the filters name node properties (name,
   * profile_id, status, role), and some member must match them; the action (CLUSTER_OPERATION)
   * lists those members, each of whose servers the nova-worker then asks for the operation.
   */
  async operate(req: ApiRequest, identity: string, body: unknown): Promise<string> {
    requireVersion(req.version, '1.4');
    const [operation, given] = ClusterOperationRequest.pick(body);
    return this.uow.run(async (tx) => {
      const { cluster, trust } = await this.lockCluster(tx, req, identity);
      const profile = await tx.manager.getRepository(ProfileEntity).findOneBy({ id: cluster.profile_id });
      const typeName = `${profile?.type ?? PROFILE_TYPE_NOVA_SERVER}`;
      const { params, filters } = ClusterOperationRequest.check(PROFILE_TYPES.get(typeName), typeName, operation, given);
      const nodes = await this.operationNodes(tx, cluster.id, filters);
      const action = await this.submitter.submit(tx, req, {
        action: 'CLUSTER_OPERATION',
        name: `cluster_${operation}_${cluster.id.slice(0, 8)}`,
        target: cluster.id,
        clusterId: cluster.id,
        inputs: { operation, params, nodes },
        timeout: cluster.timeout,
        targetLocked: true,
        trust,
      });
      return action.id;
    });
  }

  /** The ids of the cluster's members the filters pick (Senlin's node_ids_by_cluster with exact_filter), in index order. */
  private async operationNodes(tx: Tx, clusterId: string, filters: Record<string, string[]>): Promise<string[]> {
    const where: string[] = ['cluster_id = $1'];
    const params: unknown[] = [clusterId];
    for (const [key, values] of Object.entries(filters)) {
      params.push(values);
      // the key is one of CLUSTER_OPERATION_FILTERS (ClusterOperationRequest.check), all columns of nodes
      where.push(`${key}::text = ANY($${params.length}::text[])`);
    }
    const rows: Array<{ id: string }> = await tx.manager.query(`SELECT id FROM nodes WHERE ${where.join(' AND ')} ORDER BY index, created_at, id`, params);
    if (!rows.length) throw badRequest('No node (matching the filter) could be found');
    return rows.map((r) => r.id);
  }

  private submit(req: ApiRequest, identity: string, key: ActionKey, data: Json, prechecked: boolean): Promise<string> {
    return this.uow.run(async (tx) => {
      // Locked as it is read (the submitter's conflict checks need the lock anyway): the request
      // checks then judge the cluster as it stays until this transaction ends.
      const { cluster, trust } = await this.lockCluster(tx, req, identity);
      const planned = await this.plan(tx, req, cluster, identity, key, data);
      const action = await this.submitter.submit(tx, req, {
        action: planned.action,
        target: cluster.id,
        clusterId: cluster.id,
        inputs: planned.inputs,
        timeout: cluster.timeout,
        targetLocked: true,
        trust,
        prechecked,
      });
      return action.id;
    });
  }

  /**
   * The cluster, locked; a cluster named by its id is read with the submitter's trust check in
   * the same statement (one round trip fewer for every action submitted).
   */
  private async lockCluster(tx: Tx, req: ApiRequest, identity: string): Promise<{ cluster: ClusterEntity; trust?: SeenTrust }> {
    const project = req.caller.projectId;
    if (isUuid(identity)) {
      let check: TrustCheck | null = null;
      const found = await findByIdWith(tx.manager, ClusterEntity, identity.toLowerCase(), { project, forUpdate: true }, (first) => {
        check = this.submitter.trustCheck(req, first);
        return check ?? { select: '', params: [] };
      });
      if (found) {
        const seen = check as TrustCheck | null;
        return { cluster: found.row, trust: seen ? { trustId: seen.trustId, stored: found.raw.trust_stored === true } : undefined };
      }
    }
    return { cluster: await mustFind(tx.manager, ClusterEntity, 'cluster', identity, { project, forUpdate: true }) };
  }

  /**
   * A scaling request's refusals from committed rows, before any transaction of its own (a
   * refusal then costs no BEGIN and ROLLBACK, and an accepted request no more statements than
   * before); inside the caller's when one is open (an RPC write's idempotency claim). A cluster
   * named by its id is read with the checks in one statement.
   */
  private async refuseEarly(req: ApiRequest, identity: string, key: 'scale_out' | 'scale_in', data: Json, read?: ClusterEntity): Promise<void> {
    const manager = this.uow.manager;
    const project = req.caller.projectId;
    const action = key === 'scale_out' ? 'CLUSTER_SCALE_OUT' : 'CLUSTER_SCALE_IN';
    if (!read && isUuid(identity)) {
      const id = identity.toLowerCase();
      let checks: EarlyChecks | undefined;
      const found = await findByIdWith(manager, ClusterEntity, id, { project }, (first) => (checks = this.submitter.earlyChecks(req, { action, target: id, clusterId: id }, first)));
      if (found) {
        this.scale(found.row, key, data);
        checks!.judge(found.raw);
        return;
      }
    }
    const current = read ?? (await mustFind(manager, ClusterEntity, 'cluster', identity, { project }));
    this.scale(current, key, data);
    await this.submitter.refuseEarly(manager, req, { action, target: current.id, clusterId: current.id });
  }

  /**
   * Senlin 1.9's complete_lifecycle: the token is the id of the action that waits for a lifecycle
   * hook; the answer names that action (its Location), and the cluster is not looked up (Senlin's
   * cluster_complete_lifecycle). An action that does not wait is left as it is, as Senlin does; Trellis
   * runs no lifecycle hooks, so no action of it ever waits. Unlike Senlin the token is looked up in
   * the caller's project only.
   */
  private async completeLifecycle(req: ApiRequest, data: Json): Promise<string> {
    if (!req.version.atLeast('1.9')) throw badRequest(`API version '${req.version.toString()}' is not supported on this method.`, 'MethodVersionNotFound');
    const token = CompleteLifecycleAction.parse(data).lifecycle_action_token;
    const rows: Array<{ id: string }> = await this.uow.manager.query('SELECT id FROM actions WHERE id::text = $1 AND project = $2', [token, req.caller.projectId]);
    if (!rows.length) throw notFound('action', token);
    return rows[0].id;
  }

  private plan(tx: Tx, req: ApiRequest, cluster: ClusterEntity, identity: string, key: ActionKey, data: Json): Promise<Planned> | Planned {
    switch (key) {
      case 'scale_out':
      case 'scale_in':
        return this.scale(cluster, key, data);
      case 'resize':
        return this.resize(tx, cluster, data);
      case 'policy_attach':
        return this.policyAttach(tx, req, data);
      case 'policy_detach':
      case 'policy_update':
        return this.policyBindingChange(tx, req, cluster, identity, key, data);
      case 'add_nodes':
        return this.addNodes(tx, req, cluster, data);
      case 'del_nodes':
        return this.delNodes(tx, req, cluster, data);
      case 'repair':
        return { action: 'CLUSTER_REPAIR', inputs: {} };
      case 'recover':
        return { action: 'CLUSTER_RECOVER', inputs: recoverParams(data) };
      case 'replace_nodes':
        return this.replaceNodes(tx, req, cluster, ReplaceNodesAction.read(data).nodes);
      default:
        return { action: 'CLUSTER_CHECK', inputs: data };
    }
  }

  private scale(cluster: ClusterEntity, key: 'scale_out' | 'scale_in', data: Json): Planned {
    const { count } = ScaleAction.read(data);
    const action = key === 'scale_out' ? 'CLUSTER_SCALE_OUT' : 'CLUSTER_SCALE_IN';
    const error = checkScaleRequest(cluster, action, count, this.config.maxNodesPerCluster);
    if (error) throw badRequest(error);
    return { action, inputs: count === null ? {} : { count } };
  }

  private async resize(tx: Tx, cluster: ClusterEntity, data: Json): Promise<Planned> {
    const limit = this.config.maxNodesPerCluster;
    const params = ResizeAction.read(data);
    const nodeCount = await tx.manager.getRepository(NodeEntity).countBy({ cluster_id: cluster.id });
    const error = checkResizeRequest(cluster, nodeCount, params, limit);
    if (error) throw badRequest(error);
    if (params.adjustment_type !== CHANGE_IN_PERCENTAGE) params.min_step = null;
    return { action: 'CLUSTER_RESIZE', inputs: { ...params } };
  }

  private async policyAttach(tx: Tx, req: ApiRequest, data: Json): Promise<Planned> {
    const { policy_id: policyId, enabled } = PolicyAttachAction.read(data);
    const policy = await lookup(tx.manager, PolicyEntity, policyId, { project: req.caller.projectId });
    if (!policy) throw badRequest(`The specified policy '${policyId}' could not be found.`);
    return { action: 'CLUSTER_ATTACH_POLICY', inputs: { policy_id: policy.id, enabled } };
  }

  private async policyBindingChange(
    tx: Tx,
    req: ApiRequest,
    cluster: ClusterEntity,
    clusterIdentity: string,
    key: 'policy_detach' | 'policy_update',
    data: Json,
  ): Promise<Planned> {
    const { policy_id: policyId } = PolicyDetachAction.read(data);
    const policy = await lookup(tx.manager, PolicyEntity, policyId, { project: req.caller.projectId });
    if (!policy) throw badRequest(`The specified policy '${policyId}' could not be found.`);
    const binding = await tx.manager.getRepository(ClusterPolicyEntity).findOneBy({ cluster_id: cluster.id, policy_id: policy.id });
    if (!binding) {
      throw badRequest(`The policy '${policyId}' is not attached to the specified cluster '${clusterIdentity}'.`);
    }
    if (key === 'policy_detach') return { action: 'CLUSTER_DETACH_POLICY', inputs: { policy_id: policy.id } };
    return { action: 'CLUSTER_UPDATE_POLICY', inputs: { policy_id: policy.id, enabled: PolicyUpdateAction.read(data).enabled } };
  }

  private async addNodes(tx: Tx, req: ApiRequest, cluster: ClusterEntity, data: Json): Promise<Planned> {
    const { nodes: identities } = AddNodesAction.read(data);
    const { found, missing } = await this.findNodes(tx, req, identities);
    if (missing.length) throw badRequest(`Nodes not found: ${pyList(missing)}.`);
    const owned = found.filter(([, n]) => n.cluster_id !== null).map(([i]) => i);
    if (owned.length) throw badRequest(`Nodes ${pyList(owned)} already owned by some cluster.`);
    const inactive = found.filter(([, n]) => n.status !== 'ACTIVE').map(([i]) => i);
    if (inactive.length) throw badRequest(`Nodes are not ACTIVE: ${pyList(inactive)}.`);
    const profileIds = [...new Set([cluster.profile_id, ...found.map(([, n]) => n.profile_id)])];
    const types = new Map((await tx.manager.getRepository(ProfileEntity).findBy({ id: In(profileIds) })).map((p) => [p.id, p.type]));
    const clusterType = types.get(cluster.profile_id);
    const mismatched = found.filter(([, n]) => !types.has(n.profile_id) || types.get(n.profile_id) !== clusterType).map(([i]) => i);
    if (mismatched.length) throw badRequest(`Profile type of nodes ${pyList(mismatched)} does not match that of the cluster.`);
    const ids = [...new Set(found.map(([, n]) => n.id))];
    const error = checkSizeParams(cluster, cluster.desired_capacity + ids.length, null, null, true, this.config.maxNodesPerCluster);
    if (error) throw badRequest(error);
    return { action: 'CLUSTER_ADD_NODES', inputs: { nodes: ids } };
  }

  private async delNodes(tx: Tx, req: ApiRequest, cluster: ClusterEntity, data: Json): Promise<Planned> {
    const { nodes: identities, destroy_after_deletion: destroy } = DelNodesAction.read(data);
    const { found, missing } = await this.findNodes(tx, req, identities);
    if (missing.length) throw badRequest(`Nodes not found: ${pyList(missing)}.`);
    const strangers = found.filter(([, n]) => n.cluster_id !== cluster.id).map(([i]) => i);
    if (strangers.length) throw badRequest(`Nodes not members of specified cluster: ${pyList(strangers)}.`);
    const ids = [...new Set(found.map(([, n]) => n.id))];
    const error = checkSizeParams(cluster, cluster.desired_capacity - ids.length, null, null, true, this.config.maxNodesPerCluster);
    if (error) throw badRequest(error);
    const inputs: Record<string, unknown> = { candidates: ids, count: ids.length };
    if (destroy !== null) inputs.destroy_after_deletion = destroy;
    return { action: 'CLUSTER_DEL_NODES', inputs };
  }

  /** Senlin's _validate_replace_nodes: every problem found, one line each, in Senlin's order. */
  private async replaceNodes(tx: Tx, req: ApiRequest, cluster: ClusterEntity, nodes: Record<string, string>): Promise<Planned> {
    const profiles = tx.manager.getRepository(ProfileEntity);
    const clusterType = (await profiles.findOneBy({ id: cluster.profile_id }))?.type;
    const found: Record<string, string> = {};
    const notMember: string[] = [];
    const owned: string[] = [];
    const inactive: string[] = [];
    const mismatched: string[] = [];
    const missingOld: string[] = [];
    const missingNew: string[] = [];
    for (const [oldIdentity, newIdentity] of Object.entries(nodes)) {
      const oldNode = await lookup(tx.manager, NodeEntity, oldIdentity, { project: req.caller.projectId });
      if (!oldNode) {
        missingOld.push(oldIdentity);
        continue;
      }
      const newNode = await lookup(tx.manager, NodeEntity, newIdentity, { project: req.caller.projectId });
      if (!newNode) {
        missingNew.push(newIdentity);
        continue;
      }
      if (oldNode.cluster_id !== cluster.id) notMember.push(oldIdentity);
      if (newNode.cluster_id) owned.push(newIdentity);
      if (newNode.status !== 'ACTIVE') inactive.push(newIdentity);
      if ((await profiles.findOneBy({ id: newNode.profile_id }))?.type !== clusterType) mismatched.push(newIdentity);
      found[oldNode.id] = newNode.id;
    }
    const msg: string[] = [];
    if (notMember.length) msg.push(`The specified nodes ${pyList(notMember)} to be replaced are not members of the cluster ${cluster.id}.`);
    if (owned.length) msg.push(`Nodes ${pyList(owned)} already member of a cluster.`);
    if (inactive.length) msg.push(`Nodes are not ACTIVE: ${pyList(inactive)}.`);
    if (mismatched.length) msg.push(`Profile type of nodes ${pyList(mismatched)} do not match that of the cluster.`);
    if (missingOld.length) msg.push(`Original nodes not found: ${pyList(missingOld)}.`);
    if (missingNew.length) msg.push(`Replacement nodes not found: ${pyList(missingNew)}.`);
    if (msg.length) throw badRequest(msg.join('\n'));
    return { action: 'CLUSTER_REPLACE_NODES', inputs: { candidates: found } };
  }

  /** The nodes named by ids, names or short ids, all in one query (at most MAX_NODES_PER_REQUEST). */
  private async findNodes(tx: Tx, req: ApiRequest, identities: string[]) {
    const resolved = await lookupMany(tx.manager, NodeEntity, identities, { project: req.caller.projectId });
    const found: Array<[string, NodeEntity]> = [];
    const missing: string[] = [];
    for (const [identity, node] of resolved) {
      if (node) found.push([identity, node]);
      else missing.push(identity);
    }
    return { found, missing };
  }
}

/** `recover`'s params as Senlin's cluster_recover checks them: operation, operation_params, check, check_capacity. */
function recoverParams(data: Json): Record<string, unknown> {
  for (const key of Object.keys(data)) {
    if (!RecoverAction.keys.includes(key)) {
      throw badRequest(`Action parameter ${key} is not recognizable.`);
    }
  }
  const inputs: Record<string, unknown> = { ...data };
  if (data.operation !== undefined && data.operation !== null) {
    const op = show(data.operation);
    if (!RECOVERY_OPERATIONS.includes(op.toUpperCase())) {
      throw badRequest(`Operation value '${op}' has to be one of the following: ${RECOVERY_OPERATIONS.join(', ')}.`);
    }
    inputs.operation = op.toUpperCase();
  }
  return inputs;
}

/**
 * The body holds exactly one known action key whose value is a map (a null value is an empty map),
 * and that map is a well-formed request for its action. All of it is checked before the cluster is
 * looked up, in Senlin's order (its API parsed the request object, then the conductor checked the
 * parameters, then found the cluster): a malformed request about an unknown cluster is a 400.
 */
function pickAction(body: unknown, req: ApiRequest): [ActionKey, Json] {
  const [key, data] = ClusterActionRequest.pick(body);
  checkActionRequest(key, data, req);
  return [key, data];
}

function checkActionRequest(key: ActionKey, data: Json, req: ApiRequest): void {
  // complete_lifecycle checks the microversion before its body (completeLifecycle)
  if (key === 'complete_lifecycle') return;
  if (key === 'replace_nodes' && !req.version.atLeast('1.3')) {
    throw badRequest(`API version '${req.version.toString()}' is not supported on this method.`, 'HTTPBadRequest');
  }
  if (key === 'resize') {
    const error = checkResizeParams(ResizeAction.parse(data));
    if (error) throw badRequest(error);
    return;
  }
  ClusterActionRequest.members[key].parse(data, { version: req.version });
}

/**
 * A webhook receiver's params, which become the body of its action each time it fires: the values
 * given are checked as that action's request checks them, so a count out of range is refused when
 * the receiver is made, not at every trigger. Keys and values a trigger may still add are not
 * required here.
 */
export function checkActionParams(key: string, data: Json): void {
  if (key in ClusterActionRequest.members) ClusterActionRequest.members[key as ActionKey].checkValues(data);
}
