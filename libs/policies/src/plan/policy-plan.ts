import { sortedKeys, withKeys } from '../framework/plain-data';
import { RandomSource } from '../framework/random';
import { ActionData, ClusterSnapshot, PolicyAction } from '../framework/types';
import { checkSizeParams, parseResizeParams, readResizeParams } from '../resize/resize';
import { nodeZone, nodesByAge, nodesByRandom, nodesInZones, victimsOverZones } from '../resize/victims';
import { DecisionIndex, ZoneIndex, zoneIndexFor } from '../resize/zone-index';
import { pyStr } from '../schema/py-format';
import { nodeCount, requireIds, requireListed } from '../framework/summary';
import { pyInt } from '../schema/schema';
import { positiveInt } from '../scaling/plan';

export interface PlannedPlacement {
  zone?: string;
  servergroup?: string;
}

export interface PlannedCreate {
  /** position among this action's new nodes */
  index: number;
  placement: PlannedPlacement;
}

export interface PlannedDelete {
  node_id: string;
  zone: string | null;
}

/**
 * The policies' plan for an action (`output.plan` of evaluate()), derived from the chain's action.data
 * (docs/POLICIES.md, differences 1, 2, 4); libs/decisions turns it into the engine's `EnginePlan`.
 */
export interface PolicyPlan {
  action: string;
  create: PlannedCreate[];
  delete: PlannedDelete[];
  destroy_after_deletion: boolean;
  grace_period: number;
  reduce_desired_capacity: boolean;
  /** the cluster's new desired_capacity, null when unchanged */
  desired_capacity: number | null;
  min_size?: number;
  max_size?: number;
  /** the reason the engine fails the action with; nothing is created or deleted then */
  error: string | null;
}

export interface PlanInput {
  action: PolicyAction;
  cluster: ClusterSnapshot;
  /** the chain's verdict */
  status: 'OK' | 'ERROR';
  reason: string;
  random: RandomSource;
  maxNodesPerCluster: number;
  /** the decision's zone index (see HookContext.zones) */
  zones?: DecisionIndex;
}

const NODE_ACTIONS = new Set(['NODE_CREATE', 'NODE_DELETE', 'NODE_UPDATE']);

/**
 * Senlin's action handlers' arithmetic (senlin-behaviour §2.2: counts, the strict size checks and their
 * messages) plus Trellis's application of the placement decisions. May write `data.placement` (the
 * merged per-node entries) and, for a resize no policy decided, `data.creation`/`data.deletion`.
 */
export function buildPolicyPlan(input: PlanInput): PolicyPlan {
  const { action, cluster, status, reason } = input;
  const data = action.data;
  const plan: PolicyPlan = {
    action: action.action,
    create: [],
    delete: [],
    destroy_after_deletion: true,
    grace_period: 0,
    reduce_desired_capacity: true,
    desired_capacity: null,
    error: null,
  };
  if (status !== 'OK') {
    plan.error = `${NODE_ACTIONS.has(action.action) ? 'Policy check: ' : 'Policy check failure: '}${reason}`;
    return plan;
  }
  const current = nodeCount(cluster);
  const index = () => zoneIndexFor(input.zones, cluster.nodes);
  const strictCheck = (desired: number) => checkSizeParams(cluster, desired, null, null, true, input.maxNodesPerCluster);

  switch (action.action) {
    case 'CLUSTER_SCALE_OUT': {
      const creation = asRecord(data.creation);
      let count: number | undefined;
      if (creation) count = nonNegativeInt(creation.count ?? 1);
      else count = positiveInt(action.inputs.count ?? 1);
      if (count === undefined) {
        const raw = creation ? creation.count : (action.inputs.count ?? 1);
        return fail(plan, `Invalid count (${pyStr(raw)}) for scaling out.`);
      }
      const error = strictCheck(current + count);
      if (error) return fail(plan, error);
      plan.desired_capacity = current + count;
      plan.create = placeNewNodes(data, count);
      return plan;
    }
    case 'CLUSTER_SCALE_IN': {
      const deletion = asRecord(data.deletion);
      let count: number | undefined;
      let candidates: string[] = [];
      if (deletion && Object.keys(deletion).length > 0) {
        candidates = stringList(deletion.candidates);
        count = candidates.length || nonNegativeInt(deletion.count ?? 1);
        if (count === undefined) return fail(plan, `Invalid count (${pyStr(deletion.count)}) for scaling in.`);
      } else {
        count = positiveInt(action.inputs.count ?? 1);
        if (count === undefined) return fail(plan, `Invalid count (${pyStr(action.inputs.count ?? 1)}) for scaling in.`);
      }
      count = Math.min(count, current);
      const error = strictCheck(current - count);
      if (error) return fail(plan, error);
      plan.desired_capacity = current - count;
      applyDeletionFlags(plan, deletion);
      plan.delete = toDeletes(cluster, candidates.length > 0 ? candidates : chooseVictims(cluster, deletion, count, input.random, index()), index());
      return plan;
    }
    case 'CLUSTER_RESIZE': {
      if (!('deletion' in data) && !('creation' in data)) {
        const result = parseResizeParams(action.inputs, data, cluster, current, input.maxNodesPerCluster);
        if (!result.ok) return fail(plan, result.reason);
      }
      const sizes = readResizeParams(action.inputs);
      if (sizes.min_size !== null) plan.min_size = sizes.min_size;
      if (sizes.max_size !== null) plan.max_size = sizes.max_size;
      const deletion = asRecord(data.deletion);
      if (deletion) {
        const count = Math.min(nonNegativeInt(deletion.count) ?? 0, current);
        const candidates = stringList(deletion.candidates);
        plan.desired_capacity = current - count;
        applyDeletionFlags(plan, deletion);
        plan.delete = toDeletes(cluster, candidates.length > 0 ? candidates : chooseVictims(cluster, deletion, count, input.random, index()), index());
        return plan;
      }
      const count = nonNegativeInt(asRecord(data.creation)?.count) ?? 0;
      plan.desired_capacity = current + count;
      plan.create = placeNewNodes(data, count);
      return plan;
    }
    case 'CLUSTER_DEL_NODES': {
      const deletion = asRecord(data.deletion);
      const candidates = stringList(deletion?.candidates).length > 0 ? stringList(deletion?.candidates) : stringList(action.inputs.candidates);
      // Senlin's do_del_nodes: the nodes leave the cluster and keep their servers unless the request
      // (destroy_after_deletion, 1.4) or a deletion policy says to destroy them
      plan.destroy_after_deletion = deletion ? deletion.destroy_after_deletion === true : action.inputs.destroy_after_deletion === true;
      applyDeletionFlags(plan, deletion);
      plan.delete = toDeletes(cluster, candidates);
      if (plan.reduce_desired_capacity) plan.desired_capacity = Math.max(0, cluster.desired_capacity - candidates.length);
      return plan;
    }
    case 'NODE_CREATE': {
      const error = strictCheck(cluster.desired_capacity + 1);
      if (error) return fail(plan, error);
      plan.desired_capacity = cluster.desired_capacity + 1;
      plan.create = placeNewNodes(data, 1);
      return plan;
    }
    case 'NODE_DELETE': {
      const deletion = asRecord(data.deletion);
      applyDeletionFlags(plan, deletion);
      const target = action.target;
      if (target) plan.delete = toDeletes(cluster, [target]);
      if (plan.reduce_desired_capacity) plan.desired_capacity = Math.max(0, cluster.desired_capacity - 1);
      return plan;
    }
    default:
      return plan;
  }
}

function fail(plan: PolicyPlan, error: string): PolicyPlan {
  plan.error = error;
  plan.create = [];
  plan.delete = [];
  plan.desired_capacity = null;
  return plan;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function nonNegativeInt(v: unknown): number | undefined {
  const n = pyInt(v);
  return n !== undefined && n >= 0 ? n : undefined;
}

/**
 * `v.map(String)` for a list, else []. A list of strings (the deletion policy's candidates: 100 of
 * them in a 1,000-node scale-in by 10 %) is copied by a loop: String() of a string is that string.
 * Anything else (a hole, a non-string, an Array subclass) takes map itself.
 */
function stringList(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  if (Object.getPrototypeOf(v) !== Array.prototype) return v.map(String);
  const out = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (typeof s !== 'string' || !(i in v)) return v.map(String);
    out[i] = s;
  }
  return out;
}

function applyDeletionFlags(plan: PolicyPlan, deletion: Record<string, unknown> | undefined): void {
  if (!deletion) return;
  if (typeof deletion.destroy_after_deletion === 'boolean') plan.destroy_after_deletion = deletion.destroy_after_deletion;
  const grace = pyInt(deletion.grace_period);
  if (grace !== undefined) plan.grace_period = grace;
  if (typeof deletion.reduce_desired_capacity === 'boolean') plan.reduce_desired_capacity = deletion.reduce_desired_capacity;
}

/**
 * Decision 2 without a deletion policy: per zone of `deletion.zones` (sorted by name), error and
 * never-created nodes first, then the youngest. No zone plan: Senlin's random pick (seeded).
 */
function chooseVictims(
  cluster: ClusterSnapshot,
  deletion: Record<string, unknown> | undefined,
  count: number,
  random: RandomSource,
  index: ZoneIndex | null,
): string[] {
  const zones = asRecord(deletion?.zones);
  if (!zones || Object.keys(zones).length === 0) {
    requireListed(cluster, undefined, cluster.nodes, count, 'random');
    return nodesByRandom(cluster.nodes, count, random);
  }
  const names = sortedKeys(zones);
  const byZone = index?.nodesIn(names) ?? nodesInZones(cluster.nodes, names);
  return victimsOverZones(names, (zone) => {
    const n = nonNegativeInt(zones[zone]) ?? 0;
    if (!(n > 0)) return null;
    requireListed(cluster, zone, byZone.get(zone) ?? [], n, 'youngest');
    return nodesByAge(byZone.get(zone) ?? [], n, false);
  });
}

function toDeletes(cluster: ClusterSnapshot, ids: readonly string[], index: ZoneIndex | null = null): PlannedDelete[] {
  const nodes = cluster.nodes;
  const slots = CandidateSlots.of(ids);
  if (!slots) return toDeletesById(cluster, ids, index);
  // per candidate (duplicates each have their own slot): the zone of the last node with its id
  const zones = new Array<string | null>(ids.length);
  for (let k = 0; k < zones.length; k++) zones[k] = null;
  const found = new Array<number>(ids.length);
  for (let k = 0; k < found.length; k++) found[k] = 0;
  let missing = ids.length;
  if (index) {
    // Read from the end, an id's first match is that node, and the pass can stop once every id is
    // found: victims chosen from this cluster all are, and the youngest (the engine's choice) are
    // near the end.
    for (let i = nodes.length - 1; i >= 0 && missing > 0; i--) {
      const id = nodes[i].id;
      if (typeof id !== 'string') continue;
      for (let k = slots.first(id); k >= 0; k = slots.next(k)) {
        if (found[k] === 0 && ids[k] === id) {
          found[k] = 1;
          zones[k] = index.zoneOf(i) ?? null;
          missing--;
        }
      }
    }
  } else {
    // the last node with an id gives its zone, as a pass that overwrote did
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      const id = node.id;
      if (typeof id !== 'string') continue;
      let zone: string | null | undefined;
      for (let k = slots.first(id); k >= 0; k = slots.next(k)) {
        if (ids[k] !== id) continue;
        if (found[k] === 0) missing--;
        found[k] = 1;
        zones[k] = zone === undefined ? (zone = nodeZone(node) ?? null) : zone;
      }
    }
  }
  // a summarised cluster must list every node it deletes (its zone is read from the node)
  if (cluster.summary && missing > 0) requireIds(cluster, ids.filter((_, k) => found[k] === 0));
  const deletes = new Array<PlannedDelete>(ids.length);
  for (let k = 0; k < ids.length; k++) deletes[k] = { node_id: ids[k], zone: zones[k] };
  return deletes;
}

/** toDeletes for ids that are not all strings: matched as a Set matches (SameValueZero). */
function toDeletesById(cluster: ClusterSnapshot, ids: readonly unknown[], index: ZoneIndex | null): PlannedDelete[] {
  const zones = new Map<unknown, string | null>();
  const wanted = new Set(ids);
  const nodes = cluster.nodes;
  if (index) {
    for (let i = nodes.length - 1; i >= 0 && zones.size < wanted.size; i--) {
      const id = nodes[i].id;
      if (wanted.has(id) && !zones.has(id)) zones.set(id, index.zoneOf(i) ?? null);
    }
  } else {
    for (const node of nodes) if (wanted.has(node.id)) zones.set(node.id, nodeZone(node) ?? null);
  }
  if (cluster.summary && zones.size < wanted.size) requireIds(cluster, ids.filter((id) => !zones.has(id)) as string[]);
  return ids.map((id) => ({ node_id: id as string, zone: zones.get(id) ?? null }));
}

/**
 * The candidates of a deletion chained by a cheap bucket of each id (its length and end
 * characters), for one pass over every node. Node ids in a fresh snapshot have never been hashed,
 * and hashing them, the candidates' included, for a Set or Map cost more than the rest of the plan:
 * most nodes are turned away by their bucket, and the rest compared with the few candidates in it.
 */
class CandidateSlots {
  private constructor(
    /** per bucket: its first candidate slot, or -1; a single bucket for a few candidates */
    private readonly head: number[],
    private readonly chain: number[],
  ) {}

  /** Null unless every id is a string. */
  static of(ids: readonly unknown[]): CandidateSlots | null {
    // a few candidates are compared directly: a table would cost more to clear than it saves; else
    // a table of at least twice as many buckets as candidates (a scale-in by 10 of 100 nodes does
    // not clear 16 KB)
    let size = 1;
    if (ids.length > 8) while (size < 2 * ids.length && size < ID_TABLE_SIZE) size *= 2;
    // plain arrays filled by a loop: a typed array costs more to make than a scale-in by 1 uses it
    const head = new Array<number>(size);
    for (let b = 0; b < size; b++) head[b] = -1;
    const chain = new Array<number>(ids.length);
    // chained last to first, so that a bucket lists its candidates in the order of `ids`
    for (let k = ids.length - 1; k >= 0; k--) {
      const id = ids[k];
      if (typeof id !== 'string') return null;
      const b = head.length === 1 ? 0 : idBucket(id) & (head.length - 1);
      chain[k] = head[b];
      head[b] = k;
    }
    return new CandidateSlots(head, chain);
  }

  /** The first candidate slot that may hold `id`, or -1. */
  first(id: string): number {
    return this.head.length === 1 ? this.head[0] : this.head[idBucket(id) & (this.head.length - 1)];
  }

  next(k: number): number {
    return this.chain[k];
  }
}

const ID_TABLE_SIZE = 4096;

function idBucket(id: string): number {
  const n = id.length;
  if (n < 2) return n === 0 ? 0 : id.charCodeAt(0) & (ID_TABLE_SIZE - 1);
  return (((id.charCodeAt(0) * 31 + id.charCodeAt(1)) * 31 + id.charCodeAt(n - 2)) * 31 + id.charCodeAt(n - 1) + n) & (ID_TABLE_SIZE - 1);
}

/**
 * One entry per new node: the zone from zone placement's `creation.zones` (counts laid out in the
 * plan's order) unless the affinity entry already names one, and the affinity servergroup. The merged
 * entries also replace `data.placement.placements` (decision 1).
 */
function placeNewNodes(data: ActionData, count: number): PlannedCreate[] {
  const creation = asRecord(data.creation);
  const zones = asRecord(creation?.zones);
  const zoneList: string[] = [];
  if (zones) {
    for (const [zone, n] of Object.entries(zones)) {
      const k = nonNegativeInt(n) ?? 0;
      for (let i = 0; i < k && zoneList.length < count; i++) zoneList.push(zone);
    }
  }
  const placement = asRecord(data.placement);
  const affinity = Array.isArray(placement?.placements) ? (placement?.placements as unknown[]) : [];
  const creates: PlannedCreate[] = new Array(count);
  const entries: PlannedPlacement[] = new Array(count);
  let any = false;
  for (let i = 0; i < count; i++) {
    const entry: PlannedPlacement = {};
    const a = asRecord(affinity[i]);
    if (a && typeof a.servergroup === 'string') entry.servergroup = a.servergroup;
    const zone = a && typeof a.zone === 'string' ? a.zone : zoneList[i];
    if (zone !== undefined) entry.zone = zone;
    if (entry.servergroup !== undefined || entry.zone !== undefined) any = true;
    entries[i] = entry;
    creates[i] = { index: i, placement: { ...entry } };
  }
  if (any || placement) data.placement = withKeys(placement, { count, placements: entries });
  return creates;
}
