import { withKeys } from '../framework/plain-data';
import { RandomSource } from '../framework/random';
import { ActionData, ClusterSnapshot, PolicyAction } from '../framework/types';
import { checkSizeParams, parseResizeParams, readResizeParams } from '../resize/resize';
import { nodeZone, nodesByAge, nodesByRandom, nodesInZones } from '../resize/victims';
import { DecisionIndex, ZoneIndex, zoneIndexFor } from '../resize/zone-index';
import { pyStr } from '../schema/py-format';
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
  const current = cluster.nodes.length;
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

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
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
  if (!zones || Object.keys(zones).length === 0) return nodesByRandom(cluster.nodes, count, random);
  const names = Object.keys(zones).sort();
  const byZone = index?.nodesIn(names) ?? nodesInZones(cluster.nodes, names);
  const victims: string[] = [];
  for (const zone of names) {
    const n = nonNegativeInt(zones[zone]) ?? 0;
    if (n > 0) for (const id of nodesByAge(byZone.get(zone) ?? [], n, false)) victims.push(id);
  }
  return victims;
}

function toDeletes(cluster: ClusterSnapshot, ids: readonly string[], index: ZoneIndex | null = null): PlannedDelete[] {
  const zones = new Map<string, string | null>();
  const nodes = cluster.nodes;
  const matches = idMatcher(ids);
  if (index) {
    // The last node with an id gives its zone. Read from the end, an id's first match is that node,
    // and the pass can stop once every id is found: victims chosen from this cluster all are, and
    // the youngest (the engine's choice) are near the end.
    let missing = ids.length <= 8 ? distinctCount(ids) : new Set(ids).size;
    for (let i = nodes.length - 1; i >= 0 && missing > 0; i--) {
      const id = nodes[i].id;
      if (matches(id) && !zones.has(id)) {
        zones.set(id, index.zoneOf(i) ?? null);
        missing--;
      }
    }
  } else {
    // the last node with an id gives its zone, as a pass that overwrote did
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i];
      if (matches(node.id)) zones.set(node.id, nodeZone(node) ?? null);
    }
  }
  return ids.map((id) => ({ node_id: id, zone: zones.get(id) ?? null }));
}

function distinctCount(ids: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < ids.length; i++) if (ids.indexOf(ids[i]) === i) n++;
  return n;
}

/**
 * Whether a node id is one of `ids` (SameValueZero, as a Set), for a pass over every node. Node ids
 * in a fresh snapshot have never been hashed, and hashing each for a Set lookup cost more than the
 * rest of the plan: a few ids are compared directly, more go through a small table of length and end
 * characters first, so most nodes are turned away without hashing.
 */
function idMatcher(ids: readonly unknown[]): (id: unknown) => boolean {
  if (ids.length <= 8) return (id) => ids.includes(id);
  const wanted = new Set(ids);
  if (!ids.every((id) => typeof id === 'string')) return (id) => wanted.has(id);
  const table = new Uint8Array(ID_TABLE_SIZE);
  for (const id of ids as string[]) table[idBucket(id)] = 1;
  return (id) => (typeof id === 'string' ? table[idBucket(id)] === 1 && wanted.has(id) : wanted.has(id));
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
