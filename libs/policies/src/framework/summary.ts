import { CHANGE_IN_CAPACITY, parseResizeParams } from '../resize/resize';
import { scalingAdjustmentCount } from '../scaling/plan';
import { pyInt } from '../schema/schema';
import { WeightedZone, shrinkShares } from '../zone-placement/plan';
import { CloudFactMissingError, CloudFacts, InMemoryCloud } from './cloud';
import { ClusterSnapshot, ClusterSummary, NodeSnapshot, VictimOrder } from './types';

/**
 * The summarised form of a cluster in a decision's input (issue 15): the database counts the nodes
 * per zone and lists in full only the nodes a decision may pick as victims. A decision on a summary
 * must be the decision on the whole node list, byte for byte; where the listed nodes are not enough
 * to know that (a random pick, more victims in a zone than were listed, a plugin policy that sees
 * the node list), evaluate() throws IncompleteSnapshotError and the caller loads every node.
 *
 * What `cluster.nodes` holds when `cluster.summary` is set, in cluster order:
 * - every bad node (status ERROR or WARNING, tainted, or never created: no `created_at`), which
 *   victim selection takes before any other;
 * - per zone (and among the nodes without a zone), for each order of `orders`, the first `listed`
 *   of the other nodes in that order (the zone's own `listed` where it has one): oldest or youngest
 *   by `created_at` (milliseconds, ties by cluster order, reversed for the youngest), or oldest by
 *   the profile's `created_at`.
 * A victim selection of n nodes by age from one zone's list is the selection from all its nodes
 * whenever n − (bad nodes) ≤ its listed: the n first of the whole order are among the listed first.
 */

/** Thrown when a summarised input does not list the nodes this decision needs; load them all. */
export class IncompleteSnapshotError extends Error {
  constructor(readonly need: string) {
    super(`the summarised snapshot does not list enough nodes: ${need}`);
    this.name = 'IncompleteSnapshotError';
  }
}

/** How many nodes the cluster has, listed or not. */
export function nodeCount(cluster: ClusterSnapshot): number {
  return cluster.summary ? cluster.summary.node_count : cluster.nodes.length;
}

/** Nodes per zone as zoneDistribution counts them (nodeZone), from the summary. */
export function summaryZoneCounts(summary: ClusterSummary, usable: readonly string[]): Map<string, number> {
  const result = new Map<string, number>();
  for (const zone of usable) result.set(zone, zoneTotal(summary, zone));
  return result;
}

/** How many of a zone's nodes (or of the nodes without a zone: null) are listed in each order. */
function listedIn(summary: ClusterSummary, zone: string | null): number {
  if (zone !== null) for (const z of summary.zones) if (z.name === zone) return z.listed ?? summary.listed;
  return summary.listed;
}

/** How many nodes are listed in each order in every zone that has nodes (and among the nodes without one). */
function listedEverywhere(summary: ClusterSummary): number {
  let least = Infinity;
  let zoned = 0;
  for (const z of summary.zones) {
    zoned += z.nodes;
    if (z.nodes > 0) least = Math.min(least, z.listed ?? summary.listed);
  }
  return zoned < summary.node_count ? Math.min(least, summary.listed) : least;
}

function zoneTotal(summary: ClusterSummary, zone: string | null): number {
  if (zone === null) {
    let zoned = 0;
    for (const z of summary.zones) zoned += z.nodes;
    return summary.node_count - zoned;
  }
  for (const z of summary.zones) if (z.name === zone) return z.nodes;
  return 0;
}

/** Whether a node is one victim selection takes first (filterErrorNodes). */
export function isBadNode(n: NodeSnapshot): boolean {
  return n.status === 'ERROR' || n.status === 'WARNING' || n.tainted === true || n.created_at === null || n.created_at === undefined;
}


/**
 * Throws unless `listed` (the listed nodes of one zone, or of the whole cluster when `zone` is
 * undefined) is enough to pick `count` victims by `order` exactly as from every node.
 */
export function requireListed(cluster: ClusterSnapshot, zone: string | null | undefined, listed: readonly NodeSnapshot[], count: number, order: VictimOrder | 'random'): void {
  const summary = cluster.summary;
  if (!summary || count <= 0) return;
  const total = zone === undefined ? summary.node_count : zoneTotal(summary, zone);
  if (listed.length >= total) return;
  // from the whole cluster, the first `need` may all be in any one zone
  const depth = zone === undefined ? listedEverywhere(summary) : listedIn(summary, zone);
  const ordered = order !== 'random' && summary.orders.includes(order);
  // enough listed whatever the bad nodes: no pass over them (a scale-in by 10 % lists 1,000 nodes)
  if (ordered && count <= depth) return;
  let bad = 0;
  for (const n of listed) if (isBadNode(n)) bad++;
  const need = count - bad;
  if (need <= 0) return;
  const where = zone === undefined ? 'the cluster' : zone === null ? 'the nodes without a zone' : `zone '${zone}'`;
  if (order === 'random') throw new IncompleteSnapshotError(`a random pick of ${count} in ${where} needs every node listed`);
  if (!ordered) throw new IncompleteSnapshotError(`victims in ${where} are picked ${order} first; the list is by ${summary.orders.join(', ') || 'no order'}`);
  if (need > depth) throw new IncompleteSnapshotError(`${count} victims in ${where}, ${depth} listed ${order} first`);
}

/** Throws unless every one of `missing` (ids not found among the listed nodes) is a listed node, i.e. every node is listed. */
export function requireIds(cluster: ClusterSnapshot, missing: readonly string[]): void {
  const summary = cluster.summary;
  if (!summary || cluster.nodes.length >= summary.node_count || missing.length === 0) return;
  if (missing.length) throw new IncompleteSnapshotError(`node(s) ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} are not listed`);
}

/**
 * How many nodes of the cluster recorded each of `groupIds` as their server group
 * (`data.placement.servergroup`), leaving out the node `exclude`: from the summary's `groups` when
 * the cluster is summarised (IncompleteSnapshotError when it has none, or a node is to be left out).
 */
export function serverGroupMembers(cluster: ClusterSnapshot, groupIds: readonly string[], exclude: string | null = null): number[] {
  const summary = cluster.summary;
  if (summary) {
    if (!summary.groups) throw new IncompleteSnapshotError('the summary does not count the members of each server group');
    if (exclude !== null) throw new IncompleteSnapshotError(`the members of each server group without node ${exclude}`);
    const byId = new Map(summary.groups.map((g) => [g.id, g.nodes]));
    // a group id named twice counts at its first place only, as the walk below does
    return groupIds.map((id, j) => (groupIds.indexOf(id) === j ? (byId.get(id) ?? 0) : 0));
  }
  return countGroupMembers(cluster.nodes, groupIds, exclude);
}

/** How many of `nodes` recorded each of `groupIds` as their server group, leaving out the node `exclude`. */
export function countGroupMembers(nodes: readonly NodeSnapshot[], groupIds: readonly string[], exclude: string | null = null): number[] {
  const counts = groupIds.map(() => 0);
  for (const node of nodes) {
    if (node.id === exclude) continue;
    const group = node.data?.placement?.servergroup;
    if (typeof group !== 'string') continue;
    const j = groupIds.indexOf(group);
    if (j >= 0) counts[j]++;
  }
  return counts;
}

/** Nodes per recorded server group, sorted by id: the summary's `groups` (the reference the loader's SQL is tested against). */
export function groupCounts(nodes: readonly NodeSnapshot[]): Array<{ id: string; nodes: number }> {
  const counts = new Map<string, number>();
  for (const node of nodes) {
    const group = node.data?.placement?.servergroup;
    if (typeof group === 'string') counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  return [...counts].map(([id, n]) => ({ id, nodes: n })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The zone of a node as victim selection and zone placement read it (nodeZone). */
function zoneOfNode(node: NodeSnapshot): string | null {
  const recorded = node.data?.placement?.zone;
  if (typeof recorded === 'string') return recorded;
  const reported = node.server?.availability_zone;
  return typeof reported === 'string' ? reported : null;
}

/**
 * The summarised form of a whole node list, as the engine's loader builds it in SQL: the pure
 * reference the loader is tested against, and what the decision benchmark times. `timestamp`
 * reads a timestamp as victim selection does (timestampMillis).
 */
export function summariseNodes<N extends NodeSnapshot & { status?: string }>(
  nodes: readonly N[],
  listing: VictimListing,
  timestamp: (v: string | null | undefined) => number,
): { nodes: N[]; summary: ClusterSummary } {
  const { listed, orders } = listing;
  const depthOf = (zone: string | null) => (zone === null ? listed : (listing.zones?.get(zone) ?? listed));
  const zones = new Map<string | null, { nodes: number; active: number; good: number[] }>();
  const keep = new Uint8Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    const zone = zoneOfNode(n);
    let z = zones.get(zone);
    if (!z) zones.set(zone, (z = { nodes: 0, active: 0, good: [] }));
    z.nodes++;
    if (n.status === 'ACTIVE') z.active++;
    if (isBadNode(n)) keep[i] = 1;
    else z.good.push(i);
  }
  const byKey = (key: (i: number) => number, good: number[], descending: boolean) =>
    [...good].sort((a, b) => {
      const d = key(a) - key(b);
      if (d !== 0) return descending ? -d : d;
      return descending ? b - a : a - b;
    });
  const age = (i: number) => timestamp(nodes[i].created_at);
  const profileAge = (i: number) => timestamp(nodes[i].profile_created_at);
  for (const [name, z] of zones) {
    const depth = depthOf(name);
    const ordered = orders.map((o) => (o === 'oldest' ? byKey(age, z.good, false) : o === 'youngest' ? byKey(age, z.good, true) : byKey(profileAge, z.good, false)));
    for (const order of ordered) {
      for (let j = 0; j < Math.min(depth, order.length); j++) keep[order[j]] = 1;
    }
  }
  const summary: ClusterSummary = {
    node_count: nodes.length,
    zones: [...zones]
      .filter(([name]) => name !== null)
      .map(([name, z]) => (listing.zones ? { name: name as string, nodes: z.nodes, active: z.active, listed: depthOf(name) } : { name: name as string, nodes: z.nodes, active: z.active })),
    active_count: [...zones.values()].reduce((t, z) => t + z.active, 0),
    listed,
    orders: [...orders],
  };
  summary.zones.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { nodes: nodes.filter((_, i) => keep[i] === 1), summary };
}

/** What to list of a cluster's nodes: the summary's `listed`, `orders` and each zone's own `listed`. */
export interface VictimListing {
  /** per zone without an entry in `zones`, and among the nodes without a zone */
  listed: number;
  orders: VictimOrder[];
  /** per zone by name, where a zone placement plan bounds what the zone can give */
  zones?: ReadonlyMap<string, number>;
}

/**
 * What a loader should list for an action: as many nodes per zone as the victims it can ask for (the
 * request's count, the scale-in adjustments of the attached scaling policies, or the resize
 * parameters, on `count` nodes), in the order the enabled deletion policy picks them (youngest first
 * without one: the engine plan's choice). With `placement` (the nodes per zone and the cloud's
 * facts) and a zone placement policy that plans the victims per zone, each zone only as many as its
 * plan can take from it, and none of the nodes without a zone or in a zone the plan cannot use
 * (zonePlanShares). Only a guess at what the chain will decide: a decision that needs more throws
 * IncompleteSnapshotError and is made again on every node. Null: list every node (a random pick).
 */
export function victimListing(
  action: { action: string; inputs: Record<string, unknown> },
  policies: ReadonlyArray<{ spec?: unknown; enabled?: boolean; priority?: number }>,
  cluster: { min_size: number; max_size: number; desired_capacity: number },
  count: number,
  placement?: { zones: ReadonlyArray<{ name: string; nodes: number }>; cloud: { availability_zones?: unknown } | null | undefined },
): VictimListing | null {
  const int = (v: unknown) => {
    const n = pyInt(v);
    return n !== undefined && n > 0 ? n : 0;
  };
  type Spec = { type?: unknown; properties?: Record<string, unknown> } | null | undefined;
  let most = 1;
  if (action.action === 'CLUSTER_SCALE_IN') {
    most = Math.max(most, int(action.inputs.count));
    for (const p of policies) {
      const spec = p.spec as Spec;
      if (spec?.type !== 'senlin.policy.scaling' || spec.properties?.event !== 'CLUSTER_SCALE_IN') continue;
      const a = (spec.properties.adjustment ?? {}) as Record<string, unknown>;
      const adjustment = { type: String(a.type ?? CHANGE_IN_CAPACITY), number: pyInt(a.number ?? 1) ?? 1, min_step: pyInt(a.min_step ?? 1) ?? 1 };
      most = Math.max(most, scalingAdjustmentCount('CLUSTER_SCALE_IN', adjustment, count));
    }
  } else if (action.action === 'CLUSTER_RESIZE') {
    const data: Record<string, unknown> = {};
    const result = parseResizeParams(action.inputs, data, cluster, count, Number.MAX_SAFE_INTEGER);
    if (result.ok) most = Math.max(most, int((data.deletion as { count?: unknown } | undefined)?.count));
  } else return { listed: 0, orders: [] };
  const deletion = policies.find((p) => p.enabled !== false && (p.spec as Spec)?.type === 'senlin.policy.deletion');
  let order: VictimOrder = 'youngest';
  if (deletion) {
    const criteria = (deletion.spec as Spec)?.properties?.criteria ?? 'RANDOM';
    if (criteria === 'RANDOM') return null;
    order = criteria === 'OLDEST_FIRST' ? 'oldest' : criteria === 'OLDEST_PROFILE_FIRST' ? 'profile' : 'youngest';
  }
  const listed = Math.min(most, count);
  const shares = placement ? zonePlanShares(policies, placement.zones, placement.cloud, listed) : null;
  return shares === null ? { listed, orders: [order] } : { listed: 0, orders: [order], zones: shares };
}

/** The types' priorities (scaling, zone_placement and deletion policies), which a binding may override. */
const PRIORITY = { scaling: 100, zone: 300, deletion: 400 };

/**
 * How many victims each zone of `counts` can give when a zone placement policy plans a scale-in of
 * at most `most` nodes (shrinkShares; none from a zone the plan cannot use, whose nodes, like those
 * without a zone, only a plan-less pick could take), or null when the victims may not follow that
 * plan: no single
 * enabled zone placement policy, one whose zones are not plain names and integer weights, no zone
 * facts, or a scaling or deletion policy ordered so that the victims are not picked per zone of the
 * plan (a scaling policy after it replaces its plan; a deletion policy before it picks from the
 * whole cluster).
 */
function zonePlanShares(
  policies: ReadonlyArray<{ spec?: unknown; enabled?: boolean; priority?: number }>,
  counts: ReadonlyArray<{ name: string; nodes: number }>,
  cloud: { availability_zones?: unknown } | null | undefined,
  most: number,
): Map<string, number> | null {
  type Spec = { type?: unknown; properties?: Record<string, unknown> } | null | undefined;
  const enabled = policies.filter((p) => p.enabled !== false);
  const ofType = (type: string) => enabled.filter((p) => (p.spec as Spec)?.type === type);
  const priority = (p: { priority?: number }, fallback: number) => (typeof p.priority === 'number' ? p.priority : fallback);
  const placements = ofType('senlin.policy.zone_placement');
  if (placements.length !== 1) return null;
  const zone = priority(placements[0], PRIORITY.zone);
  if (ofType('senlin.policy.scaling').some((p) => priority(p, PRIORITY.scaling) >= zone)) return null;
  if (ofType('senlin.policy.deletion').some((p) => priority(p, PRIORITY.deletion) <= zone)) return null;

  const raw = (placements[0].spec as Spec)?.properties?.zones;
  if (!Array.isArray(raw)) return null;
  const zones: WeightedZone[] = [];
  for (const z of raw) {
    const name = (z as { name?: unknown } | null)?.name;
    const weight = (z as { weight?: unknown } | null)?.weight ?? 100;
    if (typeof name !== 'string' || name === '' || typeof weight !== 'number' || !Number.isInteger(weight) || weight <= 0) return null;
    if (zones.some((w) => w.name === name)) return null;
    zones.push({ name, weight });
  }
  let good: string[];
  try {
    good = new InMemoryCloud(cloud as CloudFacts | null | undefined, () => '').validateAzs(zones.map((z) => z.name));
  } catch (e) {
    if (e instanceof CloudFactMissingError) return null;
    throw e;
  }
  const usable = zones.filter((z) => good.includes(z.name));
  const current = new Map(usable.map((z) => [z.name, counts.find((c) => c.name === z.name)?.nodes ?? 0]));
  const shares = shrinkShares(current, usable, most);
  return new Map(counts.map((c) => [c.name, shares.get(c.name) ?? 0]));
}
