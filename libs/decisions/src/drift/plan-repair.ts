import { zoneOf, type GroupToRecreate } from '@trellis/policies';
import type { IdSource } from '../ids';
import type { Snapshot, SnapshotNode, SnapshotPolicy } from '../load-snapshot';
import type { DriftTypes } from './detect-drift';
import { type Finding, type FindingKind } from './findings';

/**
 * all findings (the `repair` action), or what keeps role nodes out of every group: a vanished group
 * or nodes that never joined one (a growing action brings the cluster back under its groups first).
 */
export type RepairScope = 'all' | 'groups';

/** A server group to create again in place of one that vanished. */
export interface RepairGroup {
  /** reference used in placements until the nova-worker reports the id Nova gave */
  ref: string;
  name: string;
  policy: string;
  /** the id of the vanished group */
  replaces: string;
  binding_id: string;
}

/** One node replaced by a new one: created in its group and zone, ACTIVE, then the old one deleted. */
export interface RepairReplacement {
  old_node_id: string;
  old_name: string;
  old_physical_id: string | null;
  node_id: string;
  name: string;
  placement: { zone?: string; servergroup?: string };
  reasons: FindingKind[];
}

export interface RepairPlan {
  scope: RepairScope;
  /** the findings this plan addresses */
  findings: Finding[];
  groups: RepairGroup[];
  /** binding data to store once the new groups exist (group refs resolved then) */
  binding_updates: Array<{ binding_id: string; data: Record<string, unknown> }>;
  /** in cluster order; carried out one at a time */
  replacements: RepairReplacement[];
  /** findings no replacement fixes, with the reason */
  left: Array<{ kind: FindingKind; message: string; reason: string }>;
}

export const groupRef = (ids: IdSource) => `ref:server_group:${ids.uuid()}`;

/**
 * How to bring the cluster back under its policies (pure). A vanished group is created again under
 * its old name and every node placed in it is replaced into the new one (Nova cannot add an existing
 * server to a group); a member outside its group is replaced into it; of anti-affine nodes sharing a
 * host the first keeps its place and the others are replaced (Nova's anti-affinity then puts them
 * elsewhere); a zone distribution off its weights is rebalanced by replacing nodes of the zones over
 * their share into the zones under it, preferring nodes that are replaced anyway, then the newest.
 */
export function planRepair(snapshot: Snapshot, findings: readonly Finding[], ids: IdSource, scope: RepairScope, types: DriftTypes): RepairPlan {
  const plan: RepairPlan = { scope, findings: [], groups: [], binding_updates: [], replacements: [], left: [] };
  const cluster = snapshot.cluster;
  if (!cluster) return plan;
  const byId = new Map(cluster.nodes.map((n) => [n.id, n]));
  const replaced = new Map<string, RepairReplacement>();
  const recreated = new Map<string, string>();

  const replace = (nodeId: string, reason: FindingKind, group?: string): RepairReplacement | null => {
    const node = byId.get(nodeId);
    if (!node) return null;
    let r = replaced.get(nodeId);
    if (!r) {
      const placement = (node.data?.placement ?? {}) as Record<string, unknown>;
      const zone = zoneOf(node);
      const servergroup = typeof placement.servergroup === 'string' ? placement.servergroup : undefined;
      r = {
        old_node_id: node.id,
        old_name: node.name,
        old_physical_id: node.physical_id,
        node_id: ids.uuid(),
        name: ids.nodeName(),
        placement: { ...(zone ? { zone } : {}), ...(servergroup ? { servergroup: recreated.get(servergroup) ?? servergroup } : {}) },
        reasons: [],
      };
      replaced.set(nodeId, r);
    }
    if (group) r.placement.servergroup = recreated.get(group) ?? group;
    if (!r.reasons.includes(reason)) r.reasons.push(reason);
    return r;
  };

  const wanted = findings.filter((f) => scope === 'all' || f.kind === 'group_missing' || f.kind === 'role_node_ungrouped');
  // Vanished groups first: the other findings' nodes in them go to the new group.
  for (const f of wanted.filter((x) => x.kind === 'group_missing')) {
    const policy = snapshot.policies.find((p) => p.binding_id === f.binding_id);
    const group = policy ? groupToRecreate(policy, f.group_id ?? '', cluster.name, types) : 'the binding is gone';
    if (!policy || typeof group === 'string' || !f.group_id) {
      plan.left.push({ kind: f.kind, message: f.message, reason: typeof group === 'string' ? group : 'no binding to recreate the group for' });
      continue;
    }
    const ref = groupRef(ids);
    recreated.set(f.group_id, ref);
    plan.groups.push({ ref, name: group.name, policy: group.policy, replaces: f.group_id, binding_id: policy.binding_id! });
    plan.findings.push(f);
    for (const id of f.node_ids) replace(id, f.kind, f.group_id);
  }
  for (const f of wanted) {
    if (f.kind === 'member_outside_group' || f.kind === 'role_node_ungrouped') {
      for (const id of f.node_ids) replace(id, f.kind, f.group_id);
      plan.findings.push(f);
    } else if (f.kind === 'hosts_shared') {
      for (const id of f.node_ids.slice(1)) replace(id, f.kind, f.group_id);
      plan.findings.push(f);
    } else if (f.kind === 'policy_unreadable') {
      plan.left.push({ kind: f.kind, message: f.message, reason: 'fix the policy or its binding first' });
    }
  }
  for (const f of wanted.filter((x) => x.kind === 'zone_imbalance')) {
    rebalance(f, cluster.nodes, replaced, (id) => replace(id, 'zone_imbalance'));
    plan.findings.push(f);
  }

  for (const b of new Set(plan.groups.map((g) => g.binding_id))) {
    const policy = snapshot.policies.find((p) => p.binding_id === b)!;
    plan.binding_updates.push({ binding_id: b, data: types.driftPolicy(policy).withRecreatedGroups(policy.binding_data, recreated) });
  }
  const order = new Map(cluster.nodes.map((n, i) => [n.id, i]));
  plan.replacements = [...replaced.values()].sort((a, b) => order.get(a.old_node_id)! - order.get(b.old_node_id)!);
  return plan;
}

/** The vanished group as the binding's policy type creates it again, or why it cannot. */
function groupToRecreate(policy: SnapshotPolicy, groupId: string, clusterName: string, types: DriftTypes): GroupToRecreate {
  try {
    return types.driftPolicy(policy).groupToRecreate(policy.binding_data, groupId, clusterName);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** Moves nodes from zones over their share to zones under it, as few as the targets need. */
function rebalance(
  f: Finding,
  nodes: readonly SnapshotNode[],
  replaced: ReadonlyMap<string, RepairReplacement>,
  replace: (id: string) => RepairReplacement | null,
): void {
  const expected = (f.detail?.expected ?? {}) as Record<string, number>;
  const actual = (f.detail?.actual ?? {}) as Record<string, number>;
  const targets: string[] = [];
  for (const [zone, want] of Object.entries(expected)) for (let i = actual[zone] ?? 0; i < want; i++) targets.push(zone);
  const surplus = new Map<string, number>();
  for (const [zone, have] of Object.entries(actual)) if (have > (expected[zone] ?? 0)) surplus.set(zone, have - (expected[zone] ?? 0));
  const active = nodes.filter((n) => n.status === 'ACTIVE');
  // nodes replaced anyway move for free; then the newest, which have the least history to lose
  const candidates = [
    ...active.filter((n) => replaced.has(n.id)),
    ...active.filter((n) => !replaced.has(n.id)).sort((a, b) => b.index - a.index),
  ];
  for (const target of targets) {
    const node = candidates.find((n) => (surplus.get(zoneOf(n) ?? '') ?? 0) > 0);
    if (!node) return;
    surplus.set(zoneOf(node)!, surplus.get(zoneOf(node)!)! - 1);
    candidates.splice(candidates.indexOf(node), 1);
    const r = replace(node.id);
    if (r) r.placement.zone = target;
  }
}

/** Nothing for a repair to do. */
export const repairIsEmpty = (p: RepairPlan) => p.groups.length === 0 && p.replacements.length === 0;
