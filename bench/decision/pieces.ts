import {
  ChainBinding,
  ClusterSnapshot,
  DecisionIndex,
  EvaluationInput,
  HookContext,
  InMemoryCloud,
  PolicyAction,
  PolicyRegistry,
  buildPolicyPlan,
  orderBindings,
  runChain,
  seededIdFactory,
  seededRandom,
} from '@trellis/policies';

/**
 * The pieces of one pre_op evaluate() call, rebuilt from the library's public parts so each can be
 * timed alone: what evaluate() does before the chain, each policy's hook, the chain with its trace,
 * and the engine plan. `checkAgainst` proves the rebuilt pieces give evaluate()'s own result.
 */
export interface DecisionState {
  cluster: ClusterSnapshot;
  action: PolicyAction;
  cloud: InMemoryCloud;
  random: () => number;
  now: number;
  maxNodesPerCluster: number;
  /** the decision's zone index, as evaluate() shares it between the hooks and the plan (built-in policies only) */
  zones: DecisionIndex;
  /** evaluate() runs a chain of built-in policies without copies of action.data's values */
  replacesDataValues: true;
}

export function stateOf(input: EvaluationInput, maxNodesPerCluster: number): DecisionState {
  const seed = input.seed ?? 0;
  const c = input.cluster ?? {};
  const nodes = c.nodes ?? [];
  const a = input.action ?? {};
  // the benchmark's chains are built-in policies only: evaluate() gives them one zone index and no
  // copies of action.data's values (checkAgainst compares the result with evaluate()'s)
  return {
    cluster: {
      id: c.id ?? '',
      name: c.name ?? '',
      min_size: c.min_size ?? 0,
      max_size: c.max_size ?? -1,
      desired_capacity: c.desired_capacity ?? c.summary?.node_count ?? nodes.length,
      profile: { type: c.profile?.type ?? '', spec: c.profile?.spec ?? {} },
      nodes,
      ...(c.summary ? { summary: c.summary } : {}),
    },
    action: { action: a.action ?? '', target: a.target ?? null, inputs: { ...(a.inputs ?? {}) }, data: { ...(a.data ?? {}) } },
    cloud: new InMemoryCloud(input.cloud, seededIdFactory(seed)),
    random: seededRandom(seed),
    now: Date.parse(input.now as string),
    maxNodesPerCluster,
    zones: new DecisionIndex(nodes),
    replacesDataValues: true,
  };
}

/** evaluate()'s policy instantiation: envelope and property resolution of every attached spec. */
export function instantiate(registry: PolicyRegistry, input: EvaluationInput): ChainBinding[] {
  return (input.policies ?? []).map((p, i) => ({
    policy: registry.instantiate(p.spec, { id: p.id ?? null, name: p.name ?? null }, p.spec_digest ?? null),
    binding: {
      id: p.binding_id ?? p.id ?? `binding-${i}`,
      enabled: p.enabled ?? true,
      attached_at: p.attached_at ?? null,
      data: p.binding_data ?? null,
      last_op: p.last_op ?? null,
    },
    priority: p.priority,
  }));
}

export function hookContext(state: DecisionState, binding: ChainBinding): HookContext {
  return {
    action: state.action,
    cluster: state.cluster,
    cloud: state.cloud,
    binding: binding.binding,
    random: state.random,
    now: state.now,
    maxNodesPerCluster: state.maxNodesPerCluster,
    setLastOp: () => undefined,
    zones: state.zones,
  };
}

/** The bindings whose pre_op runs for this action, in chain order, as runChain picks them. */
export function runningHooks(state: DecisionState, bindings: ChainBinding[]): ChainBinding[] {
  const running: ChainBinding[] = [];
  for (const b of orderBindings(bindings)) {
    if (!b.binding.enabled) continue;
    state.action.inputs.last_op = b.binding.last_op;
    if (b.policy.needCheck('BEFORE', state.action)) running.push(b);
  }
  return running;
}

/** The label a hook piece is reported under: the policy type without `senlin.policy.` and version. */
export function hookLabel(binding: ChainBinding): string {
  return binding.policy.type.replace(/^senlin\.policy\./, '').replace(/-[\d.]+$/, '');
}

export interface PreparedHook {
  ctx: HookContext;
  binding: ChainBinding;
}

/**
 * Everything before hook `target` (by chain position) done untimed: state, instantiation and the
 * earlier hooks, with `data.status` reset and `inputs.last_op` set as runChain does.
 */
export function prepareHook(registry: PolicyRegistry, input: EvaluationInput, maxNodesPerCluster: number, target: number): PreparedHook {
  const state = stateOf(input, maxNodesPerCluster);
  const running = runningHooks(state, instantiate(registry, input));
  state.action.data.status = 'NONE';
  state.action.data.reason = '';
  for (let i = 0; i < target; i++) {
    state.action.inputs.last_op = running[i].binding.last_op;
    running[i].policy.preOp(hookContext(state, running[i]));
  }
  const binding = running[target];
  state.action.inputs.last_op = binding.binding.last_op;
  return { ctx: hookContext(state, binding), binding };
}

export interface PreparedChain {
  state: DecisionState;
  bindings: ChainBinding[];
}

export function prepareChain(registry: PolicyRegistry, input: EvaluationInput, maxNodesPerCluster: number): PreparedChain {
  return { state: stateOf(input, maxNodesPerCluster), bindings: instantiate(registry, input) };
}

export function chain({ state, bindings }: PreparedChain) {
  return runChain(bindings, 'BEFORE', state.action, state);
}

export interface PreparedPlan {
  state: DecisionState;
  status: 'OK' | 'ERROR';
  reason: string;
}

export function preparePlan(registry: PolicyRegistry, input: EvaluationInput, maxNodesPerCluster: number): PreparedPlan {
  const prepared = prepareChain(registry, input, maxNodesPerCluster);
  const result = chain(prepared);
  return { state: prepared.state, status: result.status, reason: result.reason };
}

export function plan({ state, status, reason }: PreparedPlan) {
  return buildPolicyPlan({
    action: state.action,
    cluster: state.cluster,
    status,
    reason,
    random: state.random,
    maxNodesPerCluster: state.maxNodesPerCluster,
    zones: state.zones,
  });
}
