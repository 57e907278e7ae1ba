import { ChainBinding, TraceEntry, runChain } from './framework/chain';
import { CloudChange, CloudFacts, InMemoryCloud } from './framework/cloud';
import { AttachedPolicy, Policy } from './framework/policy';
import { seededIdFactory, seededRandom } from './framework/random';
import { PolicyRegistry, PolicyTypeNotFoundError } from './framework/registry';
import { ActionData, BindingSnapshot, ClusterSnapshot, ClusterSummary, NodeSnapshot, PolicyAction, VictimOrder } from './framework/types';
import { IncompleteSnapshotError } from './framework/summary';
import { PolicyPlan, buildPolicyPlan } from './plan/policy-plan';
import { BUILTIN_POLICY_TYPES } from './builtins';
import { DEFAULT_MAX_NODES_PER_CLUSTER, MAX_MAX_NODES_PER_CLUSTER } from './resize/resize';
import { parseTimestamp } from './resize/victims';
import { DecisionIndex } from './resize/zone-index';
import { copyToExtend } from './framework/plain-data';
import { isPlainObject } from './schema/py-format';
import { SchemaError, pyInt } from './schema/schema';
import { formatSpecVersion, specTypeName } from './schema/spec';

export type EvaluationHook = 'pre_op' | 'post_op' | 'attach' | 'detach';

export interface EvaluationPolicyInput {
  id?: string | null;
  name?: string | null;
  spec: unknown;
  enabled?: boolean;
  binding_id?: string;
  attached_at?: string | null;
  binding_data?: Record<string, unknown> | null;
  last_op?: string | null;
  /** defaults to the type's PRIORITY (what Senlin copies into the binding) */
  priority?: number;
  /**
   * A digest of the spec as stored (the engine's loader: SHA-256 of the jsonb's text). Read only when
   * the caller vouches for it (EvaluateOptions.trustSpecDigests); it never changes a decision, only
   * spares comparing the spec with the policy built for the same id before.
   */
  spec_digest?: string | null;
}

export interface EvaluationNodeInput extends NodeSnapshot {}

export interface EvaluationInput {
  hook?: EvaluationHook;
  policies?: EvaluationPolicyInput[];
  /** attach only: policies already attached to the cluster */
  attached?: Array<{ id?: string | null; name?: string | null; type?: string; spec?: unknown }>;
  cluster?: {
    id?: string;
    name?: string;
    min_size?: number;
    max_size?: number;
    desired_capacity?: number;
    profile?: { type?: string; spec?: Record<string, unknown> };
    nodes?: EvaluationNodeInput[];
    /** the node list is summarised: `nodes` holds only the nodes this says (framework/summary.ts) */
    summary?: ClusterSummary;
  };
  cloud?: CloudFacts | null;
  action?: { action?: string; target?: string | null; inputs?: Record<string, unknown>; data?: ActionData };
  now?: string;
  seed?: number;
  /**
   * Senlin's max_nodes_per_cluster the decision is made under (default 1000): the engine records
   * its deployment's (TRELLIS_MAX_NODES_PER_CLUSTER) here when it is another, so that the stored
   * input decides the same again. EvaluateOptions.maxNodesPerCluster overrides it.
   */
  max_nodes_per_cluster?: number;
}

export interface EvaluateOptions {
  /** ids for objects a hook creates (server groups); default: deterministic ids derived from the seed */
  newId?: (kind: string) => string;
  registry?: PolicyRegistry;
  /** overrides input.now */
  now?: Date | string | number;
  maxNodesPerCluster?: number;
  /**
   * The input's `policies[].spec_digest` come from the caller's own database and are the digests of
   * their specs (the engine's loader): a policy built before under the same id, name and digest is
   * used without comparing its spec. Never for input a user sent: a wrong digest would reuse another
   * spec's policy. Default false: digests are ignored.
   */
  trustSpecDigests?: boolean;
}

export interface EvaluationOutput {
  hook: EvaluationHook;
  status: 'OK' | 'ERROR';
  reason: string;
  data: ActionData;
  plan: PolicyPlan | null;
  trace: TraceEntry[];
  /** pre_op / post_op */
  binding_updates?: Array<{ binding_id: string; last_op: string }>;
  /** attach / detach */
  ok?: boolean;
  binding_data?: Record<string, unknown>;
  message?: string;
  cloud_changes?: CloudChange[];
}

/** A snapshot that cannot be evaluated; `path` names the offending field. */
export class EvaluationInputError extends Error {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = 'EvaluationInputError';
  }
}

let defaultRegistry: PolicyRegistry | undefined;

const HOOKS: readonly EvaluationHook[] = ['pre_op', 'post_op', 'attach', 'detach'];

/**
 * The decision as a pure function of a snapshot (decision 17): the same input (with `now` and `seed`)
 * gives the same output. `cloud` acts as Nova during the evaluation; attach/detach report what they
 * changed in it as `cloud_changes` for the caller to apply.
 */
export function evaluate(input: EvaluationInput, options: EvaluateOptions = {}): EvaluationOutput {
  const raw: unknown = input;
  if (!isPlainObject(raw)) throw new EvaluationInputError('input', 'must be an object');
  const hook = input.hook ?? 'pre_op';
  if (!HOOKS.includes(hook)) throw new EvaluationInputError('hook', `must be one of ${HOOKS.join(', ')}, not '${String(hook)}'`);
  const registry = options.registry ?? (defaultRegistry ??= PolicyRegistry.withBuiltins());
  const seed = readSeed(input.seed);
  const random = seededRandom(seed);
  const newId = options.newId ?? seededIdFactory(seed);
  const cloud = new InMemoryCloud(input.cloud, newId);
  const cluster = readCluster(input.cluster);
  const action = readAction(input.action, cluster);
  const now = readNow(options.now ?? input.now);
  const maxNodesPerCluster = options.maxNodesPerCluster ?? readMaxNodes(input.max_nodes_per_cluster);
  const policies = input.policies ?? [];
  if (!Array.isArray(policies)) throw new EvaluationInputError('policies', 'must be a list');

  // pre_op and post_op take a summary from built-in policies only (below); attach and detach never
  if (cluster.summary && (hook === 'attach' || hook === 'detach')) throw new IncompleteSnapshotError(`the ${hook} hook is evaluated on the whole node list`);

  if (hook === 'attach' || hook === 'detach') {
    if (policies.length !== 1) throw new EvaluationInputError('policies', `${hook} takes exactly one policy, got ${policies.length}`);
    const policy = buildPolicy(registry, policies[0], 0, false);
    const binding = readBinding(policies[0], 0, policy);
    return hook === 'attach'
      ? attach(registry, input, policy, binding, cluster, cloud, random, action)
      : detach(policy, binding, cluster, cloud, action);
  }

  const trustDigests = options.trustSpecDigests === true;
  const bindings: ChainBinding[] = policies.map((p, i) => {
    const policy = buildPolicy(registry, p, i, trustDigests);
    return { policy, binding: readBinding(p, i, policy), priority: p.priority };
  });
  const when = hook === 'pre_op' ? 'BEFORE' : 'AFTER';
  const builtinOnly = bindings.every((b) => isBuiltin(b.policy));
  // A plugin's hook may read every node: it decides on a partial list only if its type says it can
  // (`summarised`). The built-in types' post_op hooks read no node at all (the scaling policy's
  // stamps its binding), so a post_op summary lists only the bad nodes (summary.spec.ts holds them to it).
  if (cluster.summary && !builtinOnly && !bindings.every((b) => isBuiltin(b.policy) || b.policy.meta.summarised)) {
    throw new IncompleteSnapshotError('a plugin policy is attached; it sees the whole node list');
  }
  // One zone index for the decision, shared by the hooks and the plan. Only built-in policies run
  // with it: they never change the snapshot, whereas a plugin's hook might move a node between zones.
  const zones = builtinOnly ? new DecisionIndex(cluster.nodes) : undefined;
  // built-in hooks replace the values of action.data they change: no copies to catch in-place changes
  const chain = runChain(bindings, when, action, { cluster, cloud, random, now, maxNodesPerCluster, zones, replacesDataValues: builtinOnly });
  const plan =
    hook === 'pre_op'
      ? buildPolicyPlan({ action, cluster, status: chain.status, reason: chain.reason, random, maxNodesPerCluster, zones })
      : null;
  return {
    hook,
    status: chain.status,
    reason: chain.reason,
    data: action.data,
    plan,
    trace: chain.trace,
    binding_updates: chain.binding_updates,
  };
}

/** A scan of the handful of built-in classes: a Set hashed each policy's constructor. */
function isBuiltin(policy: Policy): boolean {
  const cls = policy.constructor;
  for (let i = 0; i < BUILTIN_POLICY_TYPES.length; i++) if (BUILTIN_POLICY_TYPES[i] === cls) return true;
  return false;
}

function attach(
  registry: PolicyRegistry,
  input: EvaluationInput,
  policy: Policy,
  binding: BindingSnapshot,
  cluster: ClusterSnapshot,
  cloud: InMemoryCloud,
  random: () => number,
  action: PolicyAction,
): EvaluationOutput {
  const attached = readAttached(registry, input.attached);
  let result: { ok: true; data: Record<string, unknown> | null } | { ok: false; message: string };
  const other = policy.singleton ? attached.find((a) => a.type === policy.type) : undefined;
  if (other) {
    result = {
      ok: false,
      message:
        `Only one instance of policy type (${policy.type}) can be attached to a cluster, but another instance ` +
        `(${other.id}) is found attached to the cluster (${cluster.id}) already.`,
    };
  } else {
    try {
      result = policy.attach({ cluster, cloud, random, enabled: binding.enabled, attached });
    } catch (e) {
      result = { ok: false, message: e instanceof Error ? e.message : String(e) };
    }
  }
  const reason = result.ok ? 'Policy attached.' : result.message;
  const out: EvaluationOutput = {
    hook: 'attach',
    status: result.ok ? 'OK' : 'ERROR',
    reason,
    data: action.data,
    plan: null,
    trace: [singleTrace(policy, binding, result.ok, reason)],
    ok: result.ok,
    cloud_changes: result.ok ? cloud.changes : [],
  };
  if (result.ok) out.binding_data = result.data ?? {};
  else out.message = result.message;
  return out;
}

function detach(policy: Policy, binding: BindingSnapshot, cluster: ClusterSnapshot, cloud: InMemoryCloud, action: PolicyAction): EvaluationOutput {
  let result: { ok: boolean; message: string };
  try {
    result = policy.detach({ cluster, cloud, binding });
  } catch (e) {
    result = { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
  const reason = result.ok ? 'Policy detached.' : result.message;
  return {
    hook: 'detach',
    status: result.ok ? 'OK' : 'ERROR',
    reason,
    data: action.data,
    plan: null,
    trace: [singleTrace(policy, binding, result.ok, result.message || reason)],
    ok: result.ok,
    message: result.message,
    cloud_changes: result.ok ? cloud.changes : [],
  };
}

function singleTrace(policy: Policy, binding: BindingSnapshot, ok: boolean, reason: string): TraceEntry {
  return {
    binding_id: binding.id,
    policy_id: policy.id,
    policy_name: policy.name,
    policy_type: policy.type,
    priority: policy.priority,
    ran: true,
    verdict: ok ? 'OK' : 'ERROR',
    reason,
    changed_keys: [],
  };
}

function buildPolicy(registry: PolicyRegistry, p: EvaluationPolicyInput, i: number, trustDigest: boolean): Policy {
  if (!isPlainObject(p)) throw new EvaluationInputError(`policies[${i}]`, 'must be an object');
  const identity = { id: optionalText(p.id, `policies[${i}].id`), name: optionalText(p.name, `policies[${i}].name`) };
  const digest = trustDigest && typeof p.spec_digest === 'string' ? p.spec_digest : null;
  try {
    return registry.instantiate(p.spec, identity, digest);
  } catch (e) {
    if (e instanceof SchemaError) throw new EvaluationInputError(`policies[${i}].spec${e.path ? `.${e.path}` : ''}`, e.detail);
    if (e instanceof PolicyTypeNotFoundError) throw new EvaluationInputError(`policies[${i}].spec`, e.message);
    throw e;
  }
}

function readBinding(p: EvaluationPolicyInput, i: number, policy: Policy): BindingSnapshot {
  const data = p.binding_data ?? null;
  if (data !== null && !isPlainObject(data)) throw new EvaluationInputError(`policies[${i}].binding_data`, 'must be an object');
  return {
    id: p.binding_id ?? policy.id ?? `binding-${i}`,
    enabled: p.enabled ?? true,
    attached_at: p.attached_at ?? null,
    data,
    last_op: p.last_op ?? null,
  };
}

function readAttached(registry: PolicyRegistry, raw: EvaluationInput['attached']): AttachedPolicy[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new EvaluationInputError('attached', 'must be a list');
  return raw.map((a, i) => {
    if (!isPlainObject(a)) throw new EvaluationInputError(`attached[${i}]`, 'must be an object');
    let type = a.type;
    if (type === undefined) {
      try {
        type = specTypeName(a.spec);
      } catch (e) {
        throw new EvaluationInputError(`attached[${i}]`, `needs a type or a spec (${(e as Error).message})`);
      }
    }
    const identity = { id: optionalText(a.id, `attached[${i}].id`), name: optionalText(a.name, `attached[${i}].name`) };
    let policy: Policy | null = null;
    if (a.spec !== undefined && registry.has(type)) {
      try {
        policy = registry.instantiate(a.spec, identity);
      } catch (e) {
        if (e instanceof SchemaError) throw new EvaluationInputError(`attached[${i}].spec${e.path ? `.${e.path}` : ''}`, e.detail);
        throw e;
      }
    }
    return { id: identity.id, name: identity.name, type, policy };
  });
}

/**
 * A policy's id or name: a string, or null when absent. The policy cache keys on them (the engine's
 * are its rows' own; a caller of POST /v1/evaluations may send anything).
 */
function optionalText(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return null;
  throw new EvaluationInputError(path, 'must be a string or null');
}

/** The most nodes a cluster may have: Senlin's default unless the input says (a positive integer). */
function readMaxNodes(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_MAX_NODES_PER_CLUSTER;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_MAX_NODES_PER_CLUSTER) {
    throw new EvaluationInputError('max_nodes_per_cluster', `must be an integer from 1 to ${MAX_MAX_NODES_PER_CLUSTER}`);
  }
  return value;
}

function readSeed(seed: unknown): number {
  if (seed === undefined || seed === null) return 0;
  if (typeof seed !== 'number' || !Number.isInteger(seed)) throw new EvaluationInputError('seed', 'must be an integer');
  return seed;
}

/** Time is an input: the caller says what "now" is (the engine its clock, a dry-run the request's or its clock). */
function readNow(now: Date | string | number | undefined): number {
  if (now === undefined || now === null) throw new EvaluationInputError('now', 'is required (an ISO time)');
  const t = now instanceof Date ? now.getTime() : typeof now === 'number' ? now : typeof now === 'string' ? parseTimestamp(now) : Date.parse(now);
  if (!Number.isFinite(t)) throw new EvaluationInputError('now', `'${String(now)}' is not an ISO time`);
  return t;
}

function readSize(value: unknown, path: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = pyInt(value);
  if (n === undefined || (typeof value === 'number' && !Number.isInteger(value))) throw new EvaluationInputError(path, 'must be an integer');
  return n;
}

function readCluster(raw: EvaluationInput['cluster']): ClusterSnapshot {
  if (raw !== undefined && !isPlainObject(raw)) throw new EvaluationInputError('cluster', 'must be an object');
  const c = raw ?? {};
  const nodes = c.nodes ?? [];
  if (!Array.isArray(nodes)) throw new EvaluationInputError('cluster.nodes', 'must be a list');
  const profile = c.profile ?? {};
  if (!isPlainObject(profile)) throw new EvaluationInputError('cluster.profile', 'must be an object');
  const spec = profile.spec ?? {};
  if (!isPlainObject(spec)) throw new EvaluationInputError('cluster.profile.spec', 'must be an object');
  let type = profile.type;
  if (type === undefined) type = spec.type !== undefined ? `${String(spec.type)}-${formatSpecVersion(spec.version ?? '1.0')}` : '';
  const summary = c.summary === undefined || c.summary === null ? undefined : readSummary(c.summary, nodes.length);
  const cluster: ClusterSnapshot = {
    id: c.id ?? '',
    name: c.name ?? '',
    min_size: readSize(c.min_size, 'cluster.min_size', 0),
    max_size: readSize(c.max_size, 'cluster.max_size', -1),
    desired_capacity: readSize(c.desired_capacity, 'cluster.desired_capacity', summary ? summary.node_count : nodes.length),
    profile: { type, spec },
    nodes,
  };
  if (summary) cluster.summary = summary;
  return cluster;
}

const SUMMARY_COUNTS = ['node_count', 'active_count', 'listed'] as const;

const count = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function readSummary(raw: unknown, listedNodes: number): ClusterSummary {
  if (!isPlainObject(raw)) throw new EvaluationInputError('cluster.summary', 'must be an object');
  const s = raw as Record<string, unknown>;
  for (let k = 0; k < SUMMARY_COUNTS.length; k++) {
    if (!count(s[SUMMARY_COUNTS[k]])) throw new EvaluationInputError(`cluster.summary.${SUMMARY_COUNTS[k]}`, 'must be a non-negative integer');
  }
  const nodeCount = s.node_count as number;
  if (nodeCount < listedNodes) throw new EvaluationInputError('cluster.summary.node_count', `is ${nodeCount}, but cluster.nodes lists ${listedNodes}`);
  if (!Array.isArray(s.zones)) throw new EvaluationInputError('cluster.summary.zones', 'must be a list');
  let zoned = 0;
  // the path of a bad entry is written only when one is found (every decision reads the summary)
  const bad = (i: number, key: string, detail: string) => new EvaluationInputError(`cluster.summary.zones[${i}]${key}`, detail);
  const zones = s.zones.map((z: unknown, i: number) => {
    if (!isPlainObject(z)) throw bad(i, '', 'must be an object');
    const e = z as Record<string, unknown>;
    if (typeof e.name !== 'string') throw bad(i, '.name', 'must be a string');
    if (!count(e.nodes)) throw bad(i, '.nodes', 'must be a non-negative integer');
    if (!count(e.active)) throw bad(i, '.active', 'must be a non-negative integer');
    zoned += e.nodes;
    if (e.listed === undefined) return { name: e.name, nodes: e.nodes, active: e.active };
    if (!count(e.listed)) throw bad(i, '.listed', 'must be a non-negative integer');
    return { name: e.name, nodes: e.nodes, active: e.active, listed: e.listed };
  });
  if (zoned > nodeCount) throw new EvaluationInputError('cluster.summary.zones', `count ${zoned} nodes, more than node_count ${nodeCount}`);
  if (!distinctNames(zones)) throw new EvaluationInputError('cluster.summary.zones', 'name a zone twice');
  const orders = s.orders;
  if (!Array.isArray(orders) || !orders.every((o) => o === 'oldest' || o === 'youngest' || o === 'profile')) {
    throw new EvaluationInputError('cluster.summary.orders', "must be a list of 'oldest', 'youngest', 'profile'");
  }
  const summary: ClusterSummary = { node_count: nodeCount, active_count: s.active_count as number, zones, listed: s.listed as number, orders: orders as VictimOrder[] };
  if (s.groups !== undefined) summary.groups = readGroups(s.groups, nodeCount);
  return summary;
}

function readGroups(raw: unknown, nodeCount: number): Array<{ id: string; nodes: number }> {
  if (!Array.isArray(raw)) throw new EvaluationInputError('cluster.summary.groups', 'must be a list');
  let grouped = 0;
  const groups = raw.map((g: unknown, i: number) => {
    if (!isPlainObject(g)) throw new EvaluationInputError(`cluster.summary.groups[${i}]`, 'must be an object');
    const e = g as Record<string, unknown>;
    if (typeof e.id !== 'string') throw new EvaluationInputError(`cluster.summary.groups[${i}].id`, 'must be a string');
    if (!count(e.nodes)) throw new EvaluationInputError(`cluster.summary.groups[${i}].nodes`, 'must be a non-negative integer');
    grouped += e.nodes;
    return { id: e.id, nodes: e.nodes };
  });
  if (grouped > nodeCount) throw new EvaluationInputError('cluster.summary.groups', `count ${grouped} nodes, more than node_count ${nodeCount}`);
  if (new Set(groups.map((g) => g.id)).size !== groups.length) throw new EvaluationInputError('cluster.summary.groups', 'name a server group twice');
  return groups;
}

/** A handful of zones are compared in pairs: a set would hash every fresh name. */
function distinctNames(zones: ReadonlyArray<{ name: string }>): boolean {
  if (zones.length > 16) return new Set(zones.map((z) => z.name)).size === zones.length;
  for (let i = 1; i < zones.length; i++) {
    for (let j = 0; j < i; j++) if (zones[i].name === zones[j].name) return false;
  }
  return true;
}

function readAction(raw: EvaluationInput['action'], cluster: ClusterSnapshot): PolicyAction {
  if (raw !== undefined && !isPlainObject(raw)) throw new EvaluationInputError('action', 'must be an object');
  const a = raw ?? {};
  if (a.action !== undefined && typeof a.action !== 'string') throw new EvaluationInputError('action.action', 'must be a string');
  if (a.inputs !== undefined && a.inputs !== null && !isPlainObject(a.inputs)) throw new EvaluationInputError('action.inputs', 'must be an object');
  if (a.data !== undefined && a.data !== null && !isPlainObject(a.data)) throw new EvaluationInputError('action.data', 'must be an object');
  return {
    action: a.action ?? '',
    target: a.target ?? (a.action?.startsWith('NODE_') ? null : cluster.id || null),
    // copies that the chain and the hooks add keys to (last_op, status, reason, the hooks' own)
    inputs: copyToExtend(a.inputs),
    data: copyToExtend(a.data) as ActionData,
  };
}
