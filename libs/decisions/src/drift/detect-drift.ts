import { createZonePlan, type WeightedZone } from '@trellis/policies';
import {
  BINDING_KEY,
  DriftInputError,
  assignGroups,
  detectDrift,
  membersPerGroup,
  nodeRoles,
  profileRoles,
  readBindingData,
} from '../../../../plugins/role-anti-affinity';
import type { Snapshot, SnapshotCluster, SnapshotNode, SnapshotPolicy } from '../load-snapshot';
import type { Finding } from './findings';

export const ROLE_ANTI_AFFINITY_POLICY = 'trellis.policy.role_anti_affinity-1.0';
export const ZONE_PLACEMENT_POLICY = 'senlin.policy.zone_placement-1.0';

/** Policy types whose decisions drift detection compares with the cloud. */
export const DRIFT_AWARE_TYPES: readonly string[] = [ROLE_ANTI_AFFINITY_POLICY, ZONE_PLACEMENT_POLICY];

/** The enabled bindings drift detection looks at. */
export function driftBindings(policies: readonly SnapshotPolicy[]): SnapshotPolicy[] {
  return policies.filter((p) => p.binding_id && p.enabled && DRIFT_AWARE_TYPES.includes(p.type));
}

/**
 * Where the cloud strays from the cluster's policies (pure: the snapshot's nodes carry the hosts and
 * zones the nova-worker last saw, its cloud the server groups). Only ACTIVE nodes count: a node
 * being built or deleted is an action's business, not drift.
 */
export function detectClusterDrift(snapshot: Snapshot): Finding[] {
  const cluster = snapshot.cluster;
  if (!cluster) return [];
  const nodes = cluster.nodes.filter((n) => n.status === 'ACTIVE');
  const findings: Finding[] = [];
  for (const policy of driftBindings(snapshot.policies)) {
    if (policy.type === ROLE_ANTI_AFFINITY_POLICY) {
      findings.push(...roleAntiAffinityDrift(policy, nodes, snapshot), ...ungroupedRoleNodes(policy, nodes, cluster));
    }
    else if (policy.type === ZONE_PLACEMENT_POLICY) findings.push(...zoneDrift(policy, nodes, snapshot));
  }
  return findings;
}

function roleAntiAffinityDrift(policy: SnapshotPolicy, nodes: SnapshotNode[], snapshot: Snapshot): Finding[] {
  const base = { policy_id: policy.id, policy_name: policy.name, binding_id: policy.binding_id };
  const bound = readBindingData(policy.binding_data);
  const names = new Map(typeof bound === 'string' ? [] : bound.groups.map((g) => [g.id, g.name]));
  try {
    return detectDrift({
      binding_data: policy.binding_data,
      nodes,
      server_groups: snapshot.cloud.server_groups as never,
    }).map((f) => ({
      ...base,
      kind: f.kind,
      group_id: f.group_id,
      group_name: names.get(f.group_id) || undefined,
      ...(f.host ? { host: f.host } : {}),
      node_ids: f.node_ids,
      message: `${policyLabel(policy)}: ${f.message}`,
    }));
  } catch (e) {
    if (!(e instanceof DriftInputError)) throw e;
    return [{ ...base, kind: 'policy_unreadable', node_ids: [], message: `${policyLabel(policy)}: drift cannot be judged: ${e.message}` }];
  }
}

/**
 * Role-bearing nodes recorded in none of the policy's groups: nodes of a cluster created before the
 * policy, or added while it was detached. Each is reported with the group a repair would put it in
 * (round robin over the groups' members, as pre_op places new nodes).
 */
function ungroupedRoleNodes(policy: SnapshotPolicy, nodes: SnapshotNode[], cluster: SnapshotCluster): Finding[] {
  const bound = readBindingData(policy.binding_data);
  const listed = (policy.spec?.properties as { roles?: unknown } | undefined)?.roles;
  if (typeof bound === 'string' || !Array.isArray(listed)) return [];
  const roles = new Set(listed.filter((r): r is string => typeof r === 'string').map((r) => r.trim()));
  const ids = bound.groups.map((g) => g.id);
  let fromProfile;
  try {
    fromProfile = profileRoles(cluster.profile.spec);
  } catch {
    return [];
  }
  const ungrouped = nodes.filter((n) => {
    const group = (n.data?.placement as Record<string, unknown> | undefined)?.servergroup;
    if (typeof group === 'string' && group) return false;
    try {
      return nodeRoles(n as never, fromProfile).roles.some((r) => roles.has(r));
    } catch {
      return false;
    }
  });
  if (!ungrouped.length) return [];
  const targets = assignGroups(ids, membersPerGroup(nodes as never, ids), ungrouped.map(() => true));
  const names = new Map(bound.groups.map((g) => [g.id, g.name]));
  return ungrouped.map((n, i) => ({
    kind: 'role_node_ungrouped' as const,
    policy_id: policy.id,
    policy_name: policy.name,
    binding_id: policy.binding_id,
    group_id: targets[i]!,
    group_name: names.get(targets[i]!) || undefined,
    node_ids: [n.id],
    message:
      `${policyLabel(policy)}: node '${n.name}' (${n.id}) bears a role of [${[...roles].join(', ')}] ` +
      `but is in no server group of the policy (created before the policy was attached?).`,
  }));
}

/**
 * Zone placement's weights, compared with where the ACTIVE nodes are: the distribution Senlin's plan
 * gives for that many nodes from scratch is the target; a zone more than one node away is drift.
 */
function zoneDrift(policy: SnapshotPolicy, nodes: SnapshotNode[], snapshot: Snapshot): Finding[] {
  const base = { policy_id: policy.id, policy_name: policy.name, binding_id: policy.binding_id };
  const target = zoneTarget(policy, nodes.length, snapshot);
  if (typeof target === 'string') {
    return target ? [{ ...base, kind: 'policy_unreadable', node_ids: [], message: `${policyLabel(policy)}: ${target}` }] : [];
  }
  const actual = zoneCounts(nodes);
  const zones = [...new Set([...Object.keys(target), ...Object.keys(actual)])];
  const off = zones.filter((z) => Math.abs((actual[z] ?? 0) - (target[z] ?? 0)) > 1);
  if (!off.length) return [];
  const over = new Set(zones.filter((z) => (actual[z] ?? 0) > (target[z] ?? 0)));
  const shown = (m: Record<string, number>) => zones.map((z) => `${z}: ${m[z] ?? 0}`).join(', ');
  return [
    {
      ...base,
      kind: 'zone_imbalance',
      node_ids: nodes.filter((n) => over.has(zoneOf(n) ?? '')).map((n) => n.id),
      message:
        `${policyLabel(policy)}: the ${nodes.length} active node(s) are spread ${shown(actual)}; ` +
        `the weights ask for ${shown(target)} (more than one node off in ${off.join(', ')}).`,
      detail: { expected: target, actual },
    },
  ];
}

/** The per-zone target for `count` nodes; a string says why there is none ('' for nothing to say). */
export function zoneTarget(policy: SnapshotPolicy, count: number, snapshot: Snapshot): Record<string, number> | string {
  const raw = (policy.spec?.properties as Record<string, unknown> | undefined)?.zones;
  if (!Array.isArray(raw) || raw.length === 0) return 'properties.zones: must be a non-empty list to judge the zone distribution.';
  const zones: WeightedZone[] = [];
  for (let i = 0; i < raw.length; i++) {
    const z = raw[i] as Record<string, unknown> | null;
    if (!z || typeof z.name !== 'string') return `properties.zones[${i}].name: must be a string to judge the zone distribution.`;
    const weight = z.weight === undefined ? 100 : Number(z.weight);
    if (!Number.isFinite(weight) || weight < 0) return `properties.zones[${i}].weight: must be a non-negative number, not ${JSON.stringify(z.weight)}.`;
    zones.push({ name: z.name, weight });
  }
  const available = new Set(availableZones(snapshot.cloud.availability_zones));
  const usable = zones.filter((z) => available.has(z.name));
  if (count === 0 || usable.length === 0) return '';
  const plan = createZonePlan(new Map(), usable, count, true);
  if (!plan) return '';
  return plan;
}

function availableZones(facts: unknown[]): string[] {
  const out: string[] = [];
  for (const f of facts) {
    if (typeof f === 'string') out.push(f);
    else if (f && typeof f === 'object' && typeof (f as { zoneName?: unknown }).zoneName === 'string') {
      const state = (f as { zoneState?: { available?: boolean } | null }).zoneState;
      if (state?.available !== false) out.push((f as { zoneName: string }).zoneName);
    }
  }
  return out;
}

export function zoneOf(node: SnapshotNode): string | undefined {
  const z = (node.data?.placement as Record<string, unknown> | undefined)?.zone ?? node.server?.availability_zone;
  return typeof z === 'string' && z ? z : undefined;
}

export function zoneCounts(nodes: readonly SnapshotNode[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of nodes) {
    const z = zoneOf(n);
    if (z) out[z] = (out[z] ?? 0) + 1;
  }
  return out;
}

function policyLabel(p: SnapshotPolicy): string {
  return `Policy '${p.name}'`;
}

/** Binding data key of the role anti-affinity policy, for the repair's group bookkeeping. */
export { BINDING_KEY as ROLE_ANTI_AFFINITY_BINDING_KEY, readBindingData as readRoleAntiAffinityBinding };

export type { SnapshotCluster };
