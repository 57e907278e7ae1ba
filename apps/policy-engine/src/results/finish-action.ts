import { randomUUID } from 'node:crypto';
import { currentLogContext } from '@trellis/common';
import { type ActionFinishedMessage, Exchanges, RoutingKeys, SCHEMA_VERSION } from '@trellis/contracts';
import { actionDuration, actionsFinished } from '@trellis/observability';
import {
  ActionEntity,
  ClusterEntity,
  ClusterPolicyEntity,
  EventEntity,
  NodeEntity,
  addToOutbox,
  afterCommit,
  hotQuery,
  row,
  type SqlStatement,
} from '@trellis/persistence';
import type { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { actionStateStatement } from '../actions/action-rows';
import type { EnginePlan } from '@trellis/decisions';

export interface Finish {
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  reason: string;
  plan: EnginePlan;
  now: Date;
  outputs?: Record<string, unknown>;
  /** server group refs of the plan → ids Nova gave them */
  groups?: Record<string, string>;
}

const LEVEL = { INFO: 20, ERROR: 40 } as const;

/**
 * Ends an action in the caller's transaction: what it changes on success (bindings, the cluster),
 * the cluster's status from its ACTIVE nodes (Senlin's rule), an event, and the action-finished
 * notification in the outbox.
 */
export async function finishAction(m: EntityManager, action: ActionEntity, f: Finish): Promise<void> {
  // Read before a successful delete removes them: the target's name and, for the cluster's status,
  // its sizes and ACTIVE nodes (nothing below changes those unless the cluster itself goes).
  const isNode = action.action.startsWith('NODE_');
  // the nodes the action created, for their events: read with the cluster (nothing below changes
  // their names or statuses)
  const created = action.action === 'NODE_CREATE' ? [] : f.plan.create_nodes.map((n) => n.node_id);
  const cluster = action.cluster_id ? await readClusterState(m, action.cluster_id, created) : null;
  const targetName = !isNode && cluster?.id === action.target ? cluster.name : await nameOf(m, isNode ? NodeEntity : ClusterEntity, action.target);
  if (f.status === 'SUCCEEDED') await applySuccess(m, action, f);

  action.status = f.status;
  action.status_reason = f.reason;
  action.end_time = f.now.getTime() / 1000;
  action.outputs = { ...(action.outputs ?? {}), ...(f.outputs ?? {}) };
  action.lease_owner = null;
  action.lease_expires_at = null;
  action.updated_at = f.now;
  // the action's end, the cluster's status and the events go in the outbox row's statement
  const writes: SqlStatement[] = [actionStateStatement(action)];
  if (cluster && !(f.status === 'SUCCEEDED' && f.plan.delete_cluster)) {
    // Senlin's eval_status names the action, or for a cluster operation the operation ("reboot: ...")
    writes.push(clusterStatusStatement(cluster, action.action === 'CLUSTER_OPERATION' ? String(action.inputs.operation) : action.action, f.now));
  }

  const events: EventRow[] = [{
    id: randomUUID(),
    timestamp: f.now,
    oid: action.target,
    oname: targetName ?? action.name,
    otype: isNode ? 'NODE' : 'CLUSTER',
    cluster_id: action.cluster_id,
    level: f.status === 'SUCCEEDED' ? LEVEL.INFO : LEVEL.ERROR,
    user: action.user,
    project: action.project,
    action: action.action,
    status: f.status === 'SUCCEEDED' ? 'end' : 'error',
    status_reason: f.reason,
    meta_data: { action_id: action.id },
  }, ...nodeEvents(action, f, cluster ? cluster.created : await readNodes(m, created))];
  writes.push(eventsStatement(events));

  const messageId = randomUUID();
  const finished: ActionFinishedMessage = {
    message_id: messageId,
    schema_version: SCHEMA_VERSION,
    action_id: action.id,
    // the request that started the action, when this end is handled for it (a work result); the
    // deadline supervisor and other background ends have none
    correlation_id: currentLogContext()?.correlation_id ?? `action-${action.id}`,
    sent_at: f.now.toISOString(),
    cluster_id: action.cluster_id,
    action: action.action,
    status: f.status,
    status_reason: f.reason,
    project: action.project,
  };
  await addToOutbox(m, {
    exchange: Exchanges.events,
    routingKey: RoutingKeys.actionFinished(action.cluster_id, action.id),
    type: 'action.finished',
    messageId,
    correlationId: finished.correlation_id,
    body: finished,
  }, { with: writes });
  countFinished(m, action, f);
}

/** Once the end is committed: the action's outcome and how long it took from being accepted. */
function countFinished(m: EntityManager, action: ActionEntity, f: Finish): void {
  const labels = { action: action.action, outcome: f.status };
  const seconds = Math.max(0, (f.now.getTime() - new Date(action.created_at).getTime()) / 1000);
  afterCommit(m, () => {
    actionsFinished.inc(labels);
    actionDuration.observe(labels, seconds);
  });
}

async function applySuccess(m: EntityManager, action: ActionEntity, f: Finish): Promise<void> {
  const bindings = m.getRepository(ClusterPolicyEntity);
  const b = f.plan.binding;
  if (b?.op === 'attach') {
    await bindings.insert(row<ClusterPolicyEntity>({
      id: b.binding_id,
      cluster_id: action.cluster_id!,
      policy_id: b.policy_id,
      enabled: b.enabled,
      priority: b.priority,
      data: resolveRefs(b.data, f.groups ?? {}),
      last_op: null,
      attached_at: f.now,
    }));
  } else if (b?.op === 'detach') {
    await bindings.delete({ id: b.binding_id });
  } else if (b?.op === 'update') {
    await bindings.update({ id: b.binding_id }, { enabled: b.enabled });
  }
  if (f.plan.cluster_profile_id && action.cluster_id) {
    await m.getRepository(ClusterEntity).update({ id: action.cluster_id }, { profile_id: f.plan.cluster_profile_id });
  }
  if (f.plan.delete_cluster && action.cluster_id) {
    await bindings.delete({ cluster_id: action.cluster_id });
    await m.getRepository(NodeEntity).update({ cluster_id: action.cluster_id }, { cluster_id: null });
    await m.getRepository(ClusterEntity).delete({ id: action.cluster_id });
    // Senlin's cluster delete removes the cluster's receivers: their webhooks would only fail now
    await m.query('DELETE FROM receivers WHERE cluster_id = $1', [action.cluster_id]);
  }
}

/** Replace server-group references of a decision with the ids Nova gave the groups. */
export function resolveRefs<T>(value: T, groups: Record<string, string>): T {
  if (!Object.keys(groups).length) return value;
  const text = JSON.stringify(value).replace(/"(ref:[^"]+)"/g, (whole, ref: string) =>
    groups[ref] ? JSON.stringify(groups[ref]) : whole,
  );
  return JSON.parse(text) as T;
}

/** The name of the node or cluster `id`, if it still exists. */
async function nameOf(m: EntityManager, entity: typeof NodeEntity | typeof ClusterEntity, id: string): Promise<string | undefined> {
  return (await m.getRepository<{ id: string; name: string }>(entity).findOne({ where: { id }, select: { name: true } }))?.name;
}

type CreatedNode = Pick<NodeEntity, 'id' | 'name' | 'status' | 'status_reason'>;

interface ClusterState {
  id: string;
  name: string;
  min_size: number;
  max_size: number;
  desired_capacity: number;
  /** created_at is still null: the cluster's first action is ending */
  unborn: boolean;
  active: number;
  /** the nodes asked for, in the order asked */
  created: CreatedNode[];
}

/**
 * What Senlin's status rule needs of a cluster, with its ACTIVE nodes counted, and the nodes
 * `created` (ids), in one query.
 */
async function readClusterState(m: EntityManager, clusterId: string, created: string[]): Promise<ClusterState | null> {
  const rows: ClusterState[] = await hotQuery(
    m,
    `SELECT c.id, c.name, c.min_size, c.max_size, c.desired_capacity, c.created_at IS NULL AS unborn,
            (SELECT count(*)::int FROM nodes n WHERE n.cluster_id = c.id AND n.status = 'ACTIVE') AS active,
            (SELECT coalesce(json_agg(json_build_object('id', n.id, 'name', n.name, 'status', n.status, 'status_reason', n.status_reason)
                                      ORDER BY array_position($2::uuid[], n.id)), '[]'::json)
               FROM nodes n WHERE n.id = ANY($2::uuid[])) AS created
       FROM clusters c WHERE c.id = $1`,
    [clusterId, created],
  );
  return rows[0] ?? null;
}

/** The nodes `ids`, in that order (for an action without a cluster). */
async function readNodes(m: EntityManager, ids: string[]): Promise<CreatedNode[]> {
  if (!ids.length) return [];
  return hotQuery(
    m,
    'SELECT id, name, status, status_reason FROM nodes WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)',
    [ids],
  );
}

/**
 * Senlin's status after a membership change: fewer ACTIVE nodes than min_size → ERROR; fewer than
 * desired_capacity → WARNING; within max_size (or no max) → ACTIVE; above it → WARNING.
 */
export function clusterStatus(c: Omit<ClusterState, 'id' | 'name' | 'unborn' | 'created'>, actionName: string): { status: string; reason: string } {
  if (c.active < c.min_size) {
    return { status: 'ERROR', reason: `${actionName}: number of active nodes is below min_size (${c.min_size}).` };
  }
  if (c.active < c.desired_capacity) {
    return { status: 'WARNING', reason: `${actionName}: number of active nodes is below desired_capacity (${c.desired_capacity}).` };
  }
  if (c.max_size < 0 || c.active <= c.max_size) {
    return { status: 'ACTIVE', reason: `${actionName}: number of active nodes is equal or above desired_capacity (${c.desired_capacity}).` };
  }
  return { status: 'WARNING', reason: `${actionName}: number of active nodes is above max_size (${c.max_size}).` };
}

function clusterStatusStatement(cluster: ClusterState, actionName: string, now: Date): SqlStatement {
  const { status, reason } = clusterStatus(cluster, actionName);
  return {
    text: `UPDATE clusters SET status = $2, status_reason = $3, updated_at = $4, created_at = CASE WHEN $5::boolean THEN $4 ELSE created_at END
      WHERE id = $1`,
    params: [cluster.id, status, reason, now, cluster.unborn],
  };
}

/** One NODE event per server the action created (Senlin's derived NODE_CREATE actions each left one). */
function nodeEvents(action: ActionEntity, f: Finish, nodes: readonly CreatedNode[]): EventRow[] {
  return nodes.map((n) =>
      ({
        id: randomUUID(),
        timestamp: f.now,
        oid: n.id,
        oname: n.name,
        otype: 'NODE',
        cluster_id: action.cluster_id,
        level: n.status === 'ACTIVE' ? LEVEL.INFO : LEVEL.ERROR,
        user: action.user,
        project: action.project,
        action: 'NODE_CREATE',
        status: n.status === 'ACTIVE' ? 'end' : 'error',
        status_reason: n.status_reason,
        meta_data: { action_id: action.id },
      }),
  );
}

type EventRow = EventEntity;

/** The events in one INSERT of fixed text (one prepared statement), whatever their number. */
function eventsStatement(events: EventRow[]): SqlStatement {
  const column = <K extends keyof EventRow>(key: K) => events.map((e) => e[key]);
  return {
    text: `INSERT INTO events (id, timestamp, oid, oname, otype, cluster_id, level, "user", project, action, status, status_reason, meta_data)
     SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::varchar[], $5::varchar[], $6::uuid[], $7::int[],
                          $8::varchar[], $9::varchar[], $10::varchar[], $11::varchar[], $12::text[], $13::jsonb[])`,
    params: [
      column('id'),
      column('timestamp'),
      column('oid'),
      column('oname'),
      column('otype'),
      column('cluster_id'),
      column('level'),
      column('user'),
      column('project'),
      column('action'),
      column('status'),
      column('status_reason'),
      events.map((e) => JSON.stringify(e.meta_data)),
    ],
  };
}
