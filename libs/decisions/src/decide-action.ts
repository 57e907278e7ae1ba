import type { ActionEntity } from '@trellis/persistence';
import { DEFAULT_MAX_NODES_PER_CLUSTER, evaluate, type PolicyPlan, type EvaluationInput, type EvaluationOutput, type PolicyRegistry } from '@trellis/policies';
import type { ServerOpDto } from '@trellis/contracts';
import { emptyPlan, type EnginePlan, type NodeUpdate } from './engine-plan';
import { propertiesOf, serverUpdate } from './profile-update';
import type { Snapshot, SnapshotPolicy } from './load-snapshot';
import { detectClusterDrift, driftTypesOf, type DriftTypes } from './drift/detect-drift';
import { planRepair, repairIsEmpty } from './drift/plan-repair';
import type { IdSource } from './ids';

export { defaultIds, type IdSource } from './ids';

/** The policy framework as the engine uses it (libs/policies, with the registry of this process). */
export interface Evaluator extends DriftTypes {
  evaluate(input: EvaluationInput, options: { newId: (kind: string) => string }): EvaluationOutput;
  /** PRIORITY of a `<type>-<version>`, copied into the binding at attach time */
  priorityOf(typeName: string): number;
  /** Senlin's max_nodes_per_cluster the decisions are made under (TRELLIS_MAX_NODES_PER_CLUSTER) */
  maxNodesPerCluster: number;
  /**
   * The policy types (without version) whose hooks never read the hypervisors, built-in and plugin
   * (PolicyRegistry.hypervisorFreeTypes): what loadSnapshot leaves the hypervisors out for.
   */
  hypervisorFreeTypes: readonly string[];
  /**
   * The policy types (without version) whose hooks never read a server group's members
   * (PolicyRegistry.memberFreeTypes): what loadSnapshot lists the groups without their members for.
   */
  memberFreeTypes: readonly string[];
  /** The policy types (without version) that decide on a summarised cluster (PolicyRegistry.summarisedTypes). */
  summarisedTypes: readonly string[];
}

export interface Decision {
  /** the hook that was evaluated; 'none' when the action ran no policy hook */
  hook: Snapshot['hook'];
  /** exactly what was evaluated (so `trellis replay --decisions` can evaluate it again) */
  input: Snapshot;
  output: Record<string, unknown>;
  trace: unknown[];
  plan: EnginePlan;
  /** null when the action may go ahead; otherwise the reason it fails with, before touching Nova */
  failure: string | null;
}

const SUCCESS: Record<string, string> = {
  CLUSTER_CREATE: 'Cluster creation succeeded.',
  CLUSTER_SCALE_OUT: 'Cluster scaling succeeded.',
  CLUSTER_SCALE_IN: 'Cluster scaling succeeded.',
  CLUSTER_RESIZE: 'Cluster resize succeeded.',
  CLUSTER_DEL_NODES: 'Completed deleting nodes.',
  CLUSTER_DELETE: 'Cluster deletion succeeded.',
  CLUSTER_ATTACH_POLICY: 'Policy attached.',
  CLUSTER_DETACH_POLICY: 'Policy detached.',
  CLUSTER_UPDATE_POLICY: 'Policy updated.',
  CLUSTER_CHECK: 'Cluster checking completed.',
  CLUSTER_UPDATE: 'Cluster update completed.',
  CLUSTER_REPAIR: 'Cluster repair completed.',
  NODE_CREATE: 'Node created successfully.',
  NODE_DELETE: 'Node deleted successfully.',
  CLUSTER_ADD_NODES: 'Completed adding nodes.',
  CLUSTER_REPLACE_NODES: 'Completed replacing nodes.',
  CLUSTER_RECOVER: 'Cluster recovery succeeded.',
  NODE_CHECK: 'Node check succeeded.',
  NODE_RECOVER: 'Node recovered successfully.',
  NODE_OPERATION: 'Node operation succeeded.',
  NODE_UPDATE: 'Node updated successfully.',
  CLUSTER_OPERATION: 'Cluster operation completed.',
};

/** Actions whose nodes the policy chain (BEFORE) decides on. */
const CHAIN_ACTIONS = new Set([
  'CLUSTER_SCALE_OUT',
  'CLUSTER_SCALE_IN',
  'CLUSTER_RESIZE',
  'CLUSTER_DEL_NODES',
  'NODE_CREATE',
  'NODE_DELETE',
]);

/**
 * Decides one action from its snapshot. Pure apart from the id source: the same snapshot and ids
 * give the same decision, which is what dry-run and `trellis replay --decisions` rely on.
 */
export function decideAction(action: ActionEntity, loaded: Snapshot, evaluator: Evaluator, ids: IdSource): Decision {
  // a deployment's own max_nodes_per_cluster goes in the input, which is stored with the decision and
  // decides the same again; Senlin's default is left out (inputs as they always were)
  const snapshot: Snapshot =
    evaluator.maxNodesPerCluster === DEFAULT_MAX_NODES_PER_CLUSTER ? loaded : { ...loaded, max_nodes_per_cluster: evaluator.maxNodesPerCluster };
  const plan = emptyPlan();
  plan.success_reason = SUCCESS[action.action] ?? plan.success_reason;
  const base = { plan };
  const none = { ...snapshot, hook: 'none' as const };
  const cluster = snapshot.cluster;

  if (action.action === 'CLUSTER_CREATE') {
    const count = Number(action.inputs.desired_capacity ?? cluster?.desired_capacity ?? 0);
    for (let i = 0; i < count; i++) plan.create_nodes.push(newNode(ids, cluster, i, {}));
    return { ...base, hook: 'none', input: none, output: {}, trace: [], failure: null };
  }

  // a standalone node has no cluster and so no policy chain: Senlin creates or deletes it as asked
  if ((action.action === 'NODE_CREATE' || action.action === 'NODE_DELETE') && !action.cluster_id) {
    return decideStandalone(action, none, ids, plan);
  }

  if (CHAIN_ACTIONS.has(action.action)) {
    const input = { ...snapshot, hook: 'pre_op' as const };
    const out = evaluator.evaluate(toInput(input), { newId: refIds(ids) });
    const policyPlan: Partial<PolicyPlan> = out.plan ?? {};
    plan.policy_plan = policyPlan as Record<string, unknown>;
    const failure = policyPlan.error ?? (out.status === 'ERROR' ? `Policy check failure: ${out.reason}` : null);
    if (!failure) {
      (policyPlan.create ?? []).forEach((c, i) => {
        const node = newNode(ids, cluster, i, c.placement ?? {});
        // NODE_CREATE targets the node row the API already made
        if (action.action === 'NODE_CREATE') node.node_id = action.target;
        plan.create_nodes.push(node);
      });
      const byId = new Map((cluster?.nodes ?? []).map((n) => [n.id, n]));
      for (const d of policyPlan.delete ?? []) {
        plan.delete_nodes.push({
          node_id: d.node_id,
          physical_id: byId.get(d.node_id)?.physical_id ?? null,
          destroy: policyPlan.destroy_after_deletion ?? true,
        });
      }
      const update: EnginePlan['cluster_update'] = {};
      if (typeof policyPlan.desired_capacity === 'number') update.desired_capacity = policyPlan.desired_capacity;
      if (typeof policyPlan.min_size === 'number') update.min_size = policyPlan.min_size;
      if (typeof policyPlan.max_size === 'number') update.max_size = policyPlan.max_size;
      plan.cluster_update = Object.keys(update).length ? update : null;
    }
    return { ...base, hook: 'pre_op', input, output: outputOf(out), trace: out.trace ?? [], failure };
  }

  if (action.action === 'CLUSTER_ATTACH_POLICY') {
    const policyId = String(action.inputs.policy_id);
    const target = snapshot.policies.find((p) => p.id === policyId && !p.binding_id) ?? null;
    if (!target) return { ...base, hook: 'none', input: none, output: {}, trace: [], failure: `The policy '${policyId}' could not be found.` };
    const input: Snapshot = {
      ...snapshot,
      hook: 'attach',
      policies: [target],
      attached: snapshot.policies.filter((p) => p.binding_id).map((p) => ({ id: p.id, type: p.type, spec: p.spec })),
    };
    const out = evaluator.evaluate(toInput(input), { newId: refIds(ids) });
    if (!out.ok) return { ...base, hook: 'attach', input, output: outputOf(out), trace: out.trace ?? [], failure: String(out.message ?? out.reason) };
    for (const c of out.cloud_changes ?? []) {
      if (c.op === 'create_server_group') plan.create_groups.push({ ref: c.id, name: c.name, policy: c.policy, rules: c.rules ?? {} });
    }
    plan.binding = {
      op: 'attach',
      binding_id: ids.uuid(),
      policy_id: policyId,
      enabled: action.inputs.enabled !== false,
      priority: evaluator.priorityOf(target.type),
      data: (out.binding_data ?? {}) as Record<string, unknown>,
    };
    return { ...base, hook: 'attach', input, output: outputOf(out), trace: out.trace ?? [], failure: null };
  }

  if (action.action === 'CLUSTER_DETACH_POLICY' || action.action === 'CLUSTER_DELETE') {
    const detaching =
      action.action === 'CLUSTER_DELETE'
        ? snapshot.policies.filter((p) => p.binding_id)
        : snapshot.policies.filter((p) => p.id === action.inputs.policy_id && p.binding_id);
    const outputs: Record<string, unknown>[] = [];
    const trace: unknown[] = [];
    const inputs = detaching.map((p): Snapshot => ({ ...snapshot, hook: 'detach', policies: [p] }));
    // one detach is replayable as it stands; several (a cluster delete) are recorded as they ran
    const input = inputs.length === 1 ? inputs[0] : none;
    const hook = inputs.length === 1 ? 'detach' : 'none';
    for (const [i, p] of detaching.entries()) {
      const out = evaluator.evaluate(toInput(inputs[i]), { newId: refIds(ids) });
      outputs.push(outputOf(out));
      trace.push(...(out.trace ?? []));
      if (!out.ok) {
        const why = String(out.message ?? out.reason);
        const failure = action.action === 'CLUSTER_DELETE' ? `Unable to detach policy ${p.binding_id} before deletion.` : why;
        return { ...base, hook, input, output: inputs.length === 1 ? outputs[0] : { detach: outputs }, trace, failure };
      }
      for (const c of out.cloud_changes ?? []) if (c.op === 'delete_server_group') plan.delete_groups.push({ id: c.id });
    }
    if (action.action === 'CLUSTER_DETACH_POLICY') {
      const binding = detaching[0];
      if (!binding) {
        return { ...base, hook: 'none', input: none, output: {}, trace, failure: `The policy '${String(action.inputs.policy_id)}' is not attached to the specified cluster '${action.target}'.` };
      }
      plan.binding = { op: 'detach', binding_id: binding.binding_id! };
    } else {
      for (const n of cluster?.nodes ?? []) plan.delete_nodes.push({ node_id: n.id, physical_id: n.physical_id, destroy: true });
      plan.delete_cluster = true;
    }
    return { ...base, hook, input, output: inputs.length === 1 ? outputs[0] : { detach: outputs }, trace, failure: null };
  }

  if (action.action === 'CLUSTER_UPDATE_POLICY') {
    const binding = snapshot.policies.find((p) => p.id === action.inputs.policy_id && p.binding_id);
    if (!binding) {
      return { ...base, hook: 'none', input: none, output: {}, trace: [], failure: `The policy '${String(action.inputs.policy_id)}' is not attached to the specified cluster '${action.target}'.` };
    }
    plan.binding = { op: 'update', binding_id: binding.binding_id!, enabled: action.inputs.enabled !== false };
    return { ...base, hook: 'none', input: none, output: {}, trace: [], failure: null };
  }

  if (action.action === 'CLUSTER_UPDATE') return decideClusterUpdate(action, none, plan);

  if (action.action === 'NODE_UPDATE') return decideNodeUpdate(action, none, plan);

  if (action.action === 'CLUSTER_CHECK' || action.action === 'CLUSTER_REPAIR') return decideDrift(action, none, ids, plan, evaluator);

  if (action.action === 'CLUSTER_ADD_NODES' || action.action === 'CLUSTER_REPLACE_NODES' || action.action === 'CLUSTER_RECOVER') {
    return decideMembership(action, none, ids, plan);
  }

  if (action.action === 'NODE_CHECK' || action.action === 'NODE_RECOVER' || action.action === 'NODE_OPERATION') {
    return decideNodeOp(action, none, plan);
  }

  if (action.action === 'CLUSTER_OPERATION') return decideClusterOperation(action, none, plan);

  return { ...base, hook: 'none', input: none, output: {}, trace: [], failure: `Action ${action.action} is not supported by this policy-engine.` };
}

/** NODE_CREATE / NODE_DELETE of a node that belongs to no cluster. */
function decideStandalone(action: ActionEntity, snapshot: Snapshot, ids: IdSource, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const node = snapshot.node;
  if (!node) return { ...base, failure: `The node '${action.target}' could not be found.` };
  if (action.action === 'NODE_CREATE') {
    // the order's server is named after the node; a standalone node has no index, the order wants one >= 0
    plan.create_nodes.push({ node_id: node.id, name: node.name || ids.nodeName(), index: 0, placement: {} });
  } else {
    plan.delete_nodes.push({ node_id: node.id, physical_id: node.physical_id, destroy: true });
  }
  return { ...base, failure: null };
}

/**
 * CLUSTER_ADD_NODES and CLUSTER_REPLACE_NODES change membership only (Senlin's NODE_JOIN and
 * NODE_LEAVE: no server is touched); CLUSTER_RECOVER replaces every member that is not ACTIVE with
 * a new node (its server, if any, is deleted), and with all members ACTIVE has nothing to do.
 */
function decideMembership(action: ActionEntity, snapshot: Snapshot, ids: IdSource, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const cluster = snapshot.cluster;
  if (!cluster) return { ...base, failure: `The cluster '${action.target}' could not be found.` };
  const members = new Set(cluster.nodes.map((n) => n.id));
  if (action.action === 'CLUSTER_ADD_NODES') {
    const join = ((action.inputs.nodes as string[] | undefined) ?? []).filter((id) => !members.has(id));
    plan.membership = { join, leave: [] };
    plan.cluster_update = { desired_capacity: cluster.desired_capacity + join.length };
    return { ...base, failure: null };
  }
  if (action.action === 'CLUSTER_REPLACE_NODES') {
    const candidates = (action.inputs.candidates ?? {}) as Record<string, string>;
    const strangers = Object.keys(candidates).filter((id) => !members.has(id));
    if (strangers.length) {
      return { ...base, failure: strangers.map((id) => `Node ${id} is not a member of the cluster ${cluster.id}.`).join('\n') };
    }
    plan.membership = { join: Object.values(candidates), leave: Object.keys(candidates) };
    return { ...base, failure: null };
  }
  const broken = cluster.nodes.filter((n) => n.status !== 'ACTIVE');
  broken.forEach((n, i) => {
    plan.delete_nodes.push({ node_id: n.id, physical_id: n.physical_id, destroy: true });
    plan.create_nodes.push(newNode(ids, cluster, i, {}));
  });
  if (broken.length) plan.success_reason = `Cluster recovery succeeded: ${broken.length} node(s) replaced.`;
  return { ...base, failure: null };
}

/** NODE_CHECK, NODE_RECOVER, NODE_OPERATION: one operation on the node's server, by the worker. */
function decideNodeOp(action: ActionEntity, snapshot: Snapshot, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const node = snapshot.node;
  if (!node) return { ...base, failure: `The node '${action.target}' could not be found.` };
  const op =
    action.action === 'NODE_CHECK'
      ? 'check'
      : action.action === 'NODE_RECOVER'
        ? String(action.inputs.operation ?? 'rebuild').toLowerCase()
        : String(action.inputs.operation);
  const params = (action.action === 'NODE_OPERATION' ? action.inputs.params : action.inputs.operation_params) as Record<string, unknown> | undefined;
  plan.server_ops = [{ node_id: node.id, physical_id: node.physical_id, op, params: params ?? {} }];
  // Senlin's texts (node_action.py); a failure's text is the worker's
  plan.success_reason =
    action.action === 'NODE_CHECK' ? 'Node check succeeded.' : action.action === 'NODE_RECOVER' ? 'Node recovered successfully.' : `Node operation '${op}' succeeded.`;
  return { ...base, failure: null };
}

/**
 * Senlin's CLUSTER_OPERATION (cluster_action.py do_operation): the operation on the server of each
 * node the request picked (`inputs.nodes`, in that order), as Senlin's NODE_OPERATION child per
 * node. A node that left the cluster since is asked for all the same: the worker fails it with
 * "The node ... could not be found.", as Senlin's child action failed.
 */
function decideClusterOperation(action: ActionEntity, snapshot: Snapshot, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const cluster = snapshot.cluster;
  if (!cluster) return { ...base, failure: `The cluster '${action.target}' could not be found.` };
  const op = String(action.inputs.operation);
  const params = (action.inputs.params ?? {}) as Record<string, unknown>;
  const members = new Map(cluster.nodes.map((n) => [n.id, n]));
  const ids = (action.inputs.nodes as string[] | undefined) ?? [];
  plan.server_ops = ids.map((id) => ({ node_id: id, physical_id: members.get(id)?.physical_id ?? null, op, params: { ...params } }));
  plan.success_reason = `Cluster operation '${op}' completed.`;
  return { ...base, failure: ids.length ? null : 'No node (matching the filter) could be found' };
}

/**
 * Senlin's CLUSTER_UPDATE (cluster_action.py do_update): name, timeout, metadata and config are
 * stored when the action starts. A new profile with profile_only is the cluster's alone; without
 * it every member's server is updated to the new profile, one node after the other, each node
 * storing the profile once its server is updated, and the cluster takes the profile when all are.
 */
function decideClusterUpdate(action: ActionEntity, snapshot: Snapshot, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const update: NonNullable<EnginePlan['cluster_update']> = {};
  for (const key of ['name', 'timeout', 'metadata', 'config'] as const) {
    if (action.inputs[key] !== undefined) (update as Record<string, unknown>)[key] = action.inputs[key];
  }
  plan.cluster_update = update;
  const profileId = action.inputs.new_profile_id;
  if (typeof profileId !== 'string') return { ...base, failure: null };
  if (action.inputs.profile_only === true) {
    update.profile_id = profileId;
    return { ...base, failure: null };
  }
  const target = snapshot.profile_update;
  if (!target?.profile) return { ...base, failure: `The profile '${profileId}' could not be found.` };
  const to = propertiesOf(target.profile.spec);
  const ops: ServerOpDto[] = [];
  const nodes: NodeUpdate[] = [];
  for (const node of target.nodes) {
    // a member on the new profile already has nothing to update (Senlin: 'No property to update.')
    if (node.profile_id === profileId) continue;
    const change = serverUpdate(propertiesOf(target.profiles[node.profile_id]?.spec), to, node.name);
    if (!change.ok) return { ...base, failure: `Failed in updating nodes: node ${node.name}: ${change.reason}.` };
    ops.push({ node_id: node.id, physical_id: node.physical_id, op: 'update', params: { ...change.params } });
    nodes.push({ node_id: node.id, profile_id: profileId });
  }
  if (ops.length) {
    plan.server_ops = ops;
    plan.node_updates = nodes;
  }
  plan.cluster_profile_id = profileId;
  return { ...base, failure: null };
}

/**
 * Senlin's NODE_UPDATE (node.py do_update): a node without a server is not updated; with a new
 * profile its server is updated first (the worker's `update` op), and name, role, metadata,
 * tainted and the profile are stored once it is; without one they are stored at once. Either way
 * the node is then ACTIVE 'Update succeeded'.
 */
function decideNodeUpdate(action: ActionEntity, snapshot: Snapshot, plan: EnginePlan): Decision {
  const base = { plan, input: snapshot, hook: 'none' as const, output: {}, trace: [] };
  const node = snapshot.node;
  if (!node) return { ...base, failure: `The node '${action.target}' could not be found.` };
  if (!node.physical_id) return { ...base, failure: 'Node update failed: the node has no server.' };
  const stored: NodeUpdate = { node_id: node.id };
  for (const key of ['name', 'role', 'metadata', 'tainted'] as const) {
    if (action.inputs[key] !== undefined) (stored as unknown as Record<string, unknown>)[key] = action.inputs[key];
  }
  plan.node_updates = [stored];
  const profileId = action.inputs.new_profile_id;
  const target = snapshot.profile_update;
  const current = target?.nodes.find((n) => n.id === node.id)?.profile_id;
  if (typeof profileId === 'string' && profileId !== current) {
    if (!target?.profile) return { ...base, failure: `The profile '${profileId}' could not be found.` };
    const change = serverUpdate(propertiesOf(current ? target.profiles[current]?.spec : null), propertiesOf(target.profile.spec), node.name);
    if (!change.ok) return { ...base, failure: `Node update failed: ${change.reason}.` };
    plan.server_ops = [{ node_id: node.id, physical_id: node.physical_id, op: 'update', params: { ...change.params } }];
    stored.profile_id = profileId;
  }
  return { ...base, failure: null };
}

/**
 * CLUSTER_CHECK: the findings on this snapshot. CLUSTER_REPAIR: the findings and the repair that
 * answers them. The engine runs both on a snapshot taken right after the nova-worker looked at the
 * cloud again; a dry run judges the facts as last seen.
 */
function decideDrift(action: ActionEntity, snapshot: Snapshot, ids: IdSource, plan: EnginePlan, types: DriftTypes): Decision {
  // no policy hook runs: the snapshot is what the findings were judged on
  const base = { plan, input: snapshot, hook: 'none' as const, trace: [], failure: null };
  const findings = detectClusterDrift(snapshot, types);
  plan.findings = findings;
  if (action.action === 'CLUSTER_CHECK') {
    plan.success_reason = findings.length
      ? `Cluster checking completed: ${findings.length} finding(s): ${findings.map((f) => f.kind).join(', ')}.`
      : 'Cluster checking completed: the cloud matches the policies.';
    return { ...base, output: { findings } };
  }
  const repair = planRepair(snapshot, findings, ids, 'all', types);
  plan.repair = repair;
  plan.success_reason = repairIsEmpty(repair)
    ? findings.length
      ? `Nothing to repair: ${repair.left.map((l) => l.reason).join('; ')}.`
      : 'Nothing to repair: the cloud matches the policies.'
    : `Cluster repair completed: ${repair.groups.length} server group(s) created again, ${repair.replacements.length} node(s) replaced.`;
  return { ...base, output: { findings, repair } };
}

function newNode(ids: IdSource, cluster: Snapshot['cluster'], i: number, placement: { zone?: string; servergroup?: string }) {
  return { node_id: ids.uuid(), name: ids.nodeName(), index: i, placement: { ...placement } };
}

/** Ids for objects a hook creates in Nova are references until the worker reports the real ids. */
const refIds = (ids: IdSource) => (kind: string) => `ref:${kind}:${ids.uuid()}`;

function toInput(s: Snapshot): EvaluationInput {
  return s as unknown as EvaluationInput;
}

function outputOf(out: EvaluationOutput): Record<string, unknown> {
  return out as unknown as Record<string, unknown>;
}

export type { SnapshotPolicy };

/** The evaluator over a registry: the built-in policy types plus the plugins this process loaded. */
export function createEvaluator(registry: PolicyRegistry, options: { maxNodesPerCluster?: number } = {}): Evaluator {
  return {
    // the input is a snapshot this process's loader read from its own database (or stored from one):
    // its spec digests are the specs' own; its max_nodes_per_cluster is decideAction's
    evaluate: (input, opts) => evaluate(input, { registry, newId: opts.newId, trustSpecDigests: true }),
    priorityOf: (typeName) => registry.get(typeName).meta.priority,
    maxNodesPerCluster: options.maxNodesPerCluster ?? DEFAULT_MAX_NODES_PER_CLUSTER,
    hypervisorFreeTypes: registry.hypervisorFreeTypes(),
    memberFreeTypes: registry.memberFreeTypes(),
    summarisedTypes: registry.summarisedTypes(),
    ...driftTypesOf(registry),
  };
}
