import type { ActionRecord } from './load';

/** A node as the database holds it. */
export interface NodeRow {
  id: string;
  cluster_id: string | null;
  physical_id: string | null;
  status: string;
}

/** An action as the database holds it. */
export interface ActionRow {
  id: string;
  status: string;
}

/** A cluster as the database holds it. */
export interface ClusterRow {
  id: string;
  desired_capacity: number;
}

/** A server as the simulator's `GET /_sim/state` lists it. */
export interface SimServer {
  id: string;
  name: string;
  status: string;
  task_state: string | null;
  metadata: Record<string, string>;
}

export interface World {
  records: ActionRecord[];
  actions: ActionRow[];
  clusters: ClusterRow[];
  nodes: NodeRow[];
  servers: SimServer[];
}

/** Every violation found, by invariant, with the rows that break it. */
export interface Violations {
  /** accepted (202) but missing, or not terminal by its deadline */
  lost: Array<{ action_id: string; cluster: string; status: string | null }>;
  /** more than one live server for one node */
  duplicateServers: Array<{ node: string; servers: string[] }>;
  /** a live server no node owns */
  orphanServers: Array<{ server: string; name: string; node: string | null }>;
  /** a node whose recorded server is not in Nova */
  nodesWithoutServer: Array<{ node: string; physical_id: string | null; status: string }>;
  /** nodes left in a transitional state although every action ended */
  stuckNodes: Array<{ node: string; cluster: string | null; status: string }>;
  /** a cluster whose node count or desired capacity is not what its succeeded actions asked */
  countMismatches: Array<{ cluster: string; expected: number | null; nodes: number; desired_capacity: number | null; failed_actions: string[] }>;
}

export const TRANSITIONAL_NODE_STATUSES = ['INIT', 'CREATING', 'DELETING', 'UPDATING', 'OPERATING'];
const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** A server on its way out (deleted, or being deleted) belongs to nobody and is no orphan. */
const live = (s: SimServer) => s.status !== 'DELETED' && s.task_state !== 'deleting';

/**
 * The suite's invariants over one quiet moment (every action the load sent has ended or passed
 * its deadline): nothing lost, one server per node, no server without a node, no node without its
 * server, no node stuck mid-way, and each cluster as big as its succeeded actions made it.
 */
export function checkInvariants(w: World): Violations {
  const actions = new Map(w.actions.map((a) => [a.id, a]));
  const accepted = w.records.filter((r) => r.actionId);
  const lost = accepted
    .filter((r) => r.lost || !actions.has(r.actionId!) || !TERMINAL.includes(actions.get(r.actionId!)!.status))
    .map((r) => ({ action_id: r.actionId!, cluster: r.cluster, status: actions.get(r.actionId!)?.status ?? null }));

  const servers = w.servers.filter(live);
  const byNode = new Map<string, string[]>();
  for (const s of servers) {
    const node = s.metadata?.trellis_node;
    if (node) byNode.set(node, [...(byNode.get(node) ?? []), s.id]);
  }
  const duplicateServers = [...byNode].filter(([, ids]) => ids.length > 1).map(([node, ids]) => ({ node, servers: ids }));
  for (const [physical, owners] of groupBy(w.nodes.filter((n) => n.physical_id), (n) => n.physical_id!)) {
    if (owners.length > 1) duplicateServers.push({ node: owners.map((n) => n.id).join(','), servers: [physical] });
  }

  const owned = new Set(w.nodes.map((n) => n.physical_id).filter((p): p is string => !!p));
  const orphanServers = servers.filter((s) => !owned.has(s.id)).map((s) => ({ server: s.id, name: s.name, node: s.metadata?.trellis_node ?? null }));
  const liveIds = new Set(servers.map((s) => s.id));
  const nodesWithoutServer = w.nodes
    .filter((n) => n.status === 'ACTIVE' && (!n.physical_id || !liveIds.has(n.physical_id)))
    .map((n) => ({ node: n.id, physical_id: n.physical_id, status: n.status }));
  const stuckNodes = w.nodes.filter((n) => TRANSITIONAL_NODE_STATUSES.includes(n.status)).map((n) => ({ node: n.id, cluster: n.cluster_id, status: n.status }));

  const countMismatches: Violations['countMismatches'] = [];
  for (const c of w.clusters) {
    const mine = accepted.filter((r) => r.cluster === c.id);
    const failed = mine.filter((r) => actions.get(r.actionId!)?.status !== 'SUCCEEDED').map((r) => r.actionId!);
    const lastSucceeded = [...mine].reverse().find((r) => actions.get(r.actionId!)?.status === 'SUCCEEDED');
    // each action starts from the size the previous one left: with one that did not succeed the
    // size after it is not the client's to know, and the count is judged from the database alone
    const expected = failed.length ? null : (lastSucceeded?.expectedSize ?? 0);
    const count = w.nodes.filter((n) => n.cluster_id === c.id).length;
    if (expected === null ? count !== c.desired_capacity : count !== expected || c.desired_capacity !== expected) {
      countMismatches.push({ cluster: c.id, expected, nodes: count, desired_capacity: c.desired_capacity, failed_actions: failed });
    }
  }
  return { lost, duplicateServers, orphanServers, nodesWithoutServer, stuckNodes, countMismatches };
}

export function violationCount(v: Violations): number {
  return Object.values(v).reduce((n, rows) => n + rows.length, 0);
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const i of items) m.set(key(i), [...(m.get(key(i)) ?? []), i]);
  return m;
}
