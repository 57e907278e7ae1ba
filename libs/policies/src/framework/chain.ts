import { DecisionIndex } from '../resize/zone-index';
import { CloudView } from './cloud';
import { HookContext, Policy } from './policy';
import { IncompleteSnapshotError } from './summary';
import { RandomSource } from './random';
import { ActionData, BindingSnapshot, ClusterSnapshot, PolicyAction, When } from './types';

export type Verdict = 'OK' | 'ERROR' | 'SKIPPED';

export interface TraceEntry {
  binding_id: string;
  policy_id: string | null;
  policy_name: string | null;
  policy_type: string;
  priority: number;
  ran: boolean;
  skipped_reason?: string;
  verdict: Verdict;
  reason: string;
  changed_keys: string[];
}

export interface ChainBinding {
  policy: Policy;
  binding: BindingSnapshot;
  /** defaults to the policy type's PRIORITY */
  priority?: number;
}

export interface ChainContext {
  cluster: ClusterSnapshot;
  cloud: CloudView;
  random: RandomSource;
  now: number;
  maxNodesPerCluster: number;
  /** handed to every hook (HookContext.zones) */
  zones?: DecisionIndex;
  /**
   * Every hook of the chain replaces a value of `action.data` it changes and never changes one in
   * place (the built-in types: evaluate() says so for a chain of built-in policies only). The chain
   * then keeps no shallow copy of the values to catch an in-place change: a value it still finds
   * under its key is unchanged (evaluate.fast-path.spec.ts holds the built-in types to it).
   */
  replacesDataValues?: boolean;
}

export interface ChainResult {
  status: 'OK' | 'ERROR';
  reason: string;
  trace: TraceEntry[];
  binding_updates: Array<{ binding_id: string; last_op: string }>;
}

const SKIP_DISABLED = 'binding disabled';
const SKIP_EARLIER_FAILURE = 'an earlier policy failed';

/** Decision 16: priority, then the time the binding was attached, then binding id. */
export function orderBindings<T extends ChainBinding>(bindings: readonly T[]): T[] {
  const ordered = bindings.slice();
  // bindings usually come in this order already (the engine loads them so): a stable sort would
  // leave them as they are
  for (let i = 1; i < ordered.length; i++) if (compareBindings(ordered[i - 1], ordered[i]) > 0) return ordered.sort(compareBindings);
  return ordered;
}

function compareBindings(a: ChainBinding, b: ChainBinding): number {
  const pa = a.priority ?? a.policy.priority;
  const pb = b.priority ?? b.policy.priority;
  if (pa !== pb) return pa - pb;
  const ta = a.binding.attached_at ?? '';
  const tb = b.binding.attached_at ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.binding.id < b.binding.id ? -1 : a.binding.id > b.binding.id ? 1 : 0;
}

/**
 * Senlin's `Action.policy_check` (senlin-behaviour §2): resets `data.status`/`data.reason`, runs each
 * enabled binding that needs the check, stops at the first `data.status == "ERROR"` and prefixes its
 * reason with `Failed policy '<name>': `. A hook that throws fails the chain with its message instead
 * of crashing the caller. Mutates `action.inputs.last_op` and `action.data` as Senlin did.
 */
export function runChain(bindings: readonly ChainBinding[], when: When, action: PolicyAction, ctx: ChainContext): ChainResult {
  const data = action.data;
  const trace: TraceEntry[] = [];
  const updates: Array<{ binding_id: string; last_op: string }> = [];
  data.status = 'NONE';
  data.reason = '';
  let failed = false;

  for (const entry of orderBindings(bindings)) {
    const { policy, binding } = entry;
    // read before the hook runs, as the trace reports the binding the hook was given; kept in locals,
    // not an object per binding (the chain's bookkeeping is a fixed cost of every decision)
    const bindingId = binding.id;
    const policyId = policy.id;
    const policyName = policy.name;
    const policyType = policy.type;
    const priority = entry.priority ?? policy.priority;
    if (!binding.enabled || failed) {
      const skipped = !binding.enabled ? SKIP_DISABLED : SKIP_EARLIER_FAILURE;
      trace.push(skippedEntry(bindingId, policyId, policyName, policyType, priority, skipped));
      continue;
    }
    action.inputs.last_op = binding.last_op;
    if (!policy.needCheck(when, action)) {
      trace.push(skippedEntry(bindingId, policyId, policyName, policyType, priority, `not checked ${when} ${action.action}`));
      continue;
    }

    const before = snapshotTopLevel(data, ctx.replacesDataValues !== true);
    const hookCtx: HookContext = {
      action,
      cluster: ctx.cluster,
      cloud: ctx.cloud,
      binding,
      random: ctx.random,
      now: ctx.now,
      maxNodesPerCluster: ctx.maxNodesPerCluster,
      setLastOp: (last_op) => updates.push({ binding_id: binding.id, last_op }),
      zones: ctx.zones,
    };
    let note: string | void = undefined;
    try {
      note = when === 'BEFORE' ? policy.preOp(hookCtx) : policy.postOp(hookCtx);
    } catch (e) {
      // not the policy's verdict: the input lacks nodes, and the caller decides again on all of them
      if (e instanceof IncompleteSnapshotError) throw e;
      data.status = 'ERROR';
      data.reason = e instanceof Error ? e.message : String(e);
    }
    const changed = changedKeys(before, data);

    if (data.status === 'ERROR') {
      const reason = String(data.reason ?? '');
      data.reason = `Failed policy '${policy.name ?? ''}': ${reason}`;
      trace.push(ranEntry(bindingId, policyId, policyName, policyType, priority, 'ERROR', reason, changed));
      failed = true;
      continue;
    }
    const reason: string = note ? note : changed.includes('reason') ? String(data.reason) : 'no change';
    trace.push(ranEntry(bindingId, policyId, policyName, policyType, priority, 'OK', reason, changed));
  }

  if (failed) return { status: 'ERROR', reason: String(data.reason), trace, binding_updates: updates };
  const reason = 'Completed policy checking.';
  data.status = 'OK';
  data.reason = reason;
  return { status: 'OK', reason, trace, binding_updates: updates };
}

// Trace entries are written as whole literals: `{...base, ran, ...}` took V8's slow path for keys
// added after a spread, which cost more than the rest of the chain's bookkeeping together.
function skippedEntry(bindingId: string, policyId: string | null, policyName: string | null, policyType: string, priority: number, skipped: string): TraceEntry {
  return {
    binding_id: bindingId,
    policy_id: policyId,
    policy_name: policyName,
    policy_type: policyType,
    priority,
    ran: false,
    skipped_reason: skipped,
    verdict: 'SKIPPED',
    reason: skipped,
    changed_keys: [],
  };
}

function ranEntry(
  bindingId: string,
  policyId: string | null,
  policyName: string | null,
  policyType: string,
  priority: number,
  verdict: 'OK' | 'ERROR',
  reason: string,
  changed: string[],
): TraceEntry {
  return {
    binding_id: bindingId,
    policy_id: policyId,
    policy_name: policyName,
    policy_type: policyType,
    priority,
    ran: true,
    verdict,
    reason,
    changed_keys: changed,
  };
}

interface TopLevelSnapshot {
  keys: string[];
  values: unknown[];
  /** shallow copies of plain-object values, to catch a plugin that mutated one in place */
  shallow: Array<Record<string, unknown> | undefined>;
}

/** The keys and values of action.data; with `copies`, a shallow copy of each plain-object value too. */
function snapshotTopLevel(data: ActionData, copies: boolean): TopLevelSnapshot {
  const keys = Object.keys(data);
  const values = new Array<unknown>(keys.length);
  const shallow = new Array<Record<string, unknown> | undefined>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = data[keys[i]];
    values[i] = v;
    shallow[i] = copies && v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : undefined;
  }
  return { keys, values, shallow };
}

/** Top-level keys of action.data whose value changed: by reference, or one level deep for objects. */
export function changedKeys(before: TopLevelSnapshot, data: ActionData): string[] {
  const changed: string[] = [];
  const keys = before.keys;
  // A hook keeps the keys it found where they were and adds its own after them: a key found at its
  // old position is known to be (still) an own key, without `in` or a scan (both megamorphic).
  const current = Object.keys(data);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (!(i < current.length && current[i] === key) && !(key in data)) {
      changed.push(key);
      continue;
    }
    const now = data[key];
    if (now !== before.values[i] || (before.shallow[i] && !sameShallow(before.shallow[i] as Record<string, unknown>, now))) {
      changed.push(key);
    }
  }
  // action.data has a handful of keys: a scan is cheaper than building a set
  const seen = keys.length > 32 ? new Set(keys) : null;
  for (let j = 0; j < current.length; j++) {
    const key = current[j];
    if (j < keys.length && keys[j] === key) continue;
    if (!(seen ? seen.has(key) : includesKey(keys, key))) changed.push(key);
  }
  return changed;
}

function includesKey(keys: readonly string[], key: string): boolean {
  for (let i = 0; i < keys.length; i++) if (keys[i] === key) return true;
  return false;
}

function sameShallow(copy: Record<string, unknown>, now: unknown): boolean {
  const current = now as Record<string, unknown>;
  const keys = Object.keys(current);
  if (keys.length !== Object.keys(copy).length) return false;
  for (const k of keys) if (current[k] !== copy[k]) return false;
  return true;
}
