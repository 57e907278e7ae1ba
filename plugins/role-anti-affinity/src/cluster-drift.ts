import type { DriftContext, GroupToRecreate, NodeSnapshot, PolicyDriftFinding } from '@trellis/policies';
import { BINDING_KEY, readBindingData } from './binding-data';
import { DriftInputError, detectDrift } from './drift';
import { assignGroups, groupName, membersPerGroup, nodeRoles, profileRoles } from './plan';

/**
 * The policy's drift hook: its groups as Nova has them (vanished, members outside, hosts shared), and
 * role-bearing nodes in none of its groups. Messages leave out the policy's name, which the engine adds.
 */
export function clusterDrift(ctx: DriftContext, listedRoles: unknown): PolicyDriftFinding[] {
  return [...groupDrift(ctx), ...ungroupedRoleNodes(ctx, listedRoles)];
}

function groupDrift(ctx: DriftContext): PolicyDriftFinding[] {
  const bound = readBindingData(ctx.binding_data);
  const names = new Map(typeof bound === 'string' ? [] : bound.groups.map((g) => [g.id, g.name]));
  try {
    return detectDrift({ binding_data: ctx.binding_data, nodes: ctx.nodes, server_groups: ctx.cloud.server_groups }).map((f) => ({
      kind: f.kind,
      group_id: f.group_id,
      group_name: names.get(f.group_id) || undefined,
      ...(f.host ? { host: f.host } : {}),
      node_ids: f.node_ids,
      message: f.message,
    }));
  } catch (e) {
    if (!(e instanceof DriftInputError)) throw e;
    return [{ kind: 'policy_unreadable', node_ids: [], message: `drift cannot be judged: ${e.message}` }];
  }
}

/**
 * Role-bearing nodes recorded in none of the policy's groups: nodes of a cluster created before the
 * policy, or added while it was detached. Each is reported with the group a repair would put it in
 * (round robin over the groups' members, as pre_op places new nodes).
 */
function ungroupedRoleNodes(ctx: DriftContext, listed: unknown): PolicyDriftFinding[] {
  const bound = readBindingData(ctx.binding_data);
  if (typeof bound === 'string' || !Array.isArray(listed)) return [];
  const roles = new Set(listed.filter((r): r is string => typeof r === 'string').map((r) => r.trim()));
  const ids = bound.groups.map((g) => g.id);
  let fromProfile;
  try {
    fromProfile = profileRoles(ctx.cluster.profile.spec);
  } catch {
    return [];
  }
  const nodes = ctx.nodes as unknown as NodeSnapshot[];
  const ungrouped = nodes.filter((n) => {
    const group = n.data?.placement?.servergroup;
    if (typeof group === 'string' && group) return false;
    try {
      return nodeRoles(n, fromProfile).roles.some((r) => roles.has(r));
    } catch {
      return false;
    }
  });
  if (!ungrouped.length) return [];
  const targets = assignGroups(ids, membersPerGroup(nodes, ids), ungrouped.map(() => true));
  const names = new Map(bound.groups.map((g) => [g.id, g.name]));
  return ungrouped.map((n, i) => ({
    kind: 'role_node_ungrouped' as const,
    group_id: targets[i]!,
    group_name: names.get(targets[i]!) || undefined,
    node_ids: [n.id],
    message:
      `node '${n.name}' (${n.id}) bears a role of [${[...roles].join(', ')}] ` +
      `but is in no server group of the policy (created before the policy was attached?).`,
  }));
}

/** A vanished group is created again under its recorded name (or the name attach would give it) and anti-affinity policy. */
export function groupToRecreate(bindingData: Record<string, unknown> | null, groupId: string, clusterName: string): GroupToRecreate {
  const bound = readBindingData(bindingData);
  if (typeof bound === 'string') return bound;
  const index = bound.groups.findIndex((g) => g.id === groupId);
  return { name: bound.groups[index]?.name || groupName(clusterName, index + 1), policy: bound.policy };
}

/** The binding data with each re-created group's new id, marked as created by Trellis (detach deletes it). */
export function withRecreatedGroups(bindingData: Record<string, unknown> | null, recreated: ReadonlyMap<string, string>): Record<string, unknown> {
  const data = structuredClone(bindingData ?? {}) as Record<string, any>;
  const entry = data[BINDING_KEY]?.data;
  for (const g of entry?.groups ?? []) {
    const ref = recreated.get(g.id);
    if (ref) Object.assign(g, { id: ref, created: true });
  }
  return data;
}
