import { IncompleteSnapshotError, type DriftContext, type Policy, type PolicyRegistry, type ServerGroupFact } from '@trellis/policies';
import type { Snapshot, SnapshotCluster, SnapshotPolicy } from '../load-snapshot';
import type { Finding } from './findings';

/**
 * The policy types this process loaded that offer a drift check (the `drift` hook of the policy
 * framework, libs/policies framework/drift.ts). Drift detection knows no type by name: a plugin
 * type that declares the hook is asked as the built-in zone placement is.
 */
export interface DriftTypes {
  /** `<type>-<version>` of every loaded type that declares the drift hook */
  driftAwareTypes(): string[];
  /** the policy of a drift-aware binding (its type must be loaded); throws when the stored spec does not resolve */
  driftPolicy(policy: SnapshotPolicy): Policy;
}

export function driftTypesOf(registry: PolicyRegistry): DriftTypes {
  return {
    driftAwareTypes: () => registry.list().filter((t) => t.meta.hooks.includes('drift')).map((t) => t.typeName),
    driftPolicy: (p) => registry.instantiate(p.spec, { id: p.id, name: p.name }),
  };
}

/** The enabled bindings drift detection looks at. */
export function driftBindings(policies: readonly SnapshotPolicy[], types: DriftTypes): SnapshotPolicy[] {
  const aware = types.driftAwareTypes();
  return policies.filter((p) => p.binding_id && p.enabled && aware.includes(p.type));
}

/**
 * Where the cloud strays from the cluster's policies (pure: the snapshot's nodes carry the hosts and
 * zones the nova-worker last saw, its cloud the server groups). Only ACTIVE nodes count: a node
 * being built or deleted is an action's business, not drift.
 */
export function detectClusterDrift(snapshot: Snapshot, types: DriftTypes): Finding[] {
  const cluster = snapshot.cluster;
  if (!cluster) return [];
  if (cluster.summary) return summaryDrift(snapshot, cluster, types);
  const context: Omit<DriftContext, 'binding_data'> = {
    cluster: { id: cluster.id, name: cluster.name, profile: cluster.profile },
    nodes: cluster.nodes.filter((n) => n.status === 'ACTIVE'),
    cloud: { availability_zones: snapshot.cloud.availability_zones, server_groups: snapshot.cloud.server_groups as ServerGroupFact[] },
  };
  return driftBindings(snapshot.policies, types).flatMap((policy) => policyDrift(policy, context, types));
}

/**
 * A summarised cluster (only candidates listed): each binding judged from the counts of ACTIVE nodes
 * per zone. A type that cannot tell from counts, or finds drift whose finding names nodes, throws
 * IncompleteSnapshotError: the caller loads every node and asks again.
 */
function summaryDrift(snapshot: Snapshot, cluster: SnapshotCluster, types: DriftTypes): Finding[] {
  const summary = cluster.summary!;
  const context = {
    cluster: { id: cluster.id, name: cluster.name, profile: cluster.profile },
    active: summary.active_count,
    zones: new Map(summary.zones.map((z) => [z.name, z.active])),
    cloud: { availability_zones: snapshot.cloud.availability_zones, server_groups: snapshot.cloud.server_groups as ServerGroupFact[] },
  };
  return driftBindings(snapshot.policies, types).flatMap((policy) =>
    judgeBinding(policy, types, (typed) => {
      const found = typed.detectDriftFromCounts({ ...context, binding_data: policy.binding_data });
      if (found === null) throw new IncompleteSnapshotError(`${policyLabel(policy)}: drift is judged on every ACTIVE node`);
      return found;
    }),
  );
}

/** One binding's findings, each naming the policy and binding it belongs to. */
function policyDrift(policy: SnapshotPolicy, context: Omit<DriftContext, 'binding_data'>, types: DriftTypes): Finding[] {
  return judgeBinding(policy, types, (typed) => typed.detectDrift({ ...context, binding_data: policy.binding_data }));
}

/** Reads the binding's policy (a policy that cannot be read is a finding of its own) and names it in each finding `judge` returns. */
function judgeBinding(policy: SnapshotPolicy, types: DriftTypes, judge: (typed: Policy) => Array<Omit<Finding, 'policy_id' | 'policy_name' | 'binding_id'>>): Finding[] {
  const base = { policy_id: policy.id, policy_name: policy.name, binding_id: policy.binding_id };
  let typed: Policy;
  try {
    typed = types.driftPolicy(policy);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return [{ ...base, kind: 'policy_unreadable', node_ids: [], message: `${policyLabel(policy)}: drift cannot be judged: ${reason}` }];
  }
  return judge(typed).map((f) => ({ ...base, ...f, message: `${policyLabel(policy)}: ${f.message}` }));
}

function policyLabel(p: SnapshotPolicy): string {
  return `Policy '${p.name}'`;
}

export type { SnapshotCluster };
