import { ServerGroupFact } from './cloud';

/**
 * The drift contract (issue 6, issue 19): a policy type that places servers may say where the cloud
 * no longer matches what it decided, and how a repair re-creates the server groups it owns. The
 * engine asks every enabled binding whose type declares the `drift` hook; it knows no type by name.
 * Like pre_op, the hooks are pure: they read the context and return plain data.
 */

/** A cluster node as drift detection sees it: only ACTIVE nodes are passed (others are an action's business). */
export interface DriftNode {
  id: string;
  name: string;
  /** the node's place in the cluster: higher is newer */
  index: number;
  status: string;
  /** the Nova server id (server group members are server ids); null while it is being built */
  physical_id: string | null;
  data: Record<string, unknown>;
  /** the node's own metadata (e.g. `roles`), which wins over the profile's */
  metadata: Record<string, unknown>;
  /** what Nova last reported for the node's server */
  server: { availability_zone: string | null; host: string | null };
}

/**
 * A summarised cluster's view for drift (framework/summary.ts): how many nodes are ACTIVE, in all
 * and per zone, without the nodes themselves.
 */
export interface DriftCountsContext {
  cluster: DriftContext['cluster'];
  /** ACTIVE nodes */
  active: number;
  /** ACTIVE nodes per zone they recorded (nodes without a zone are in none) */
  zones: ReadonlyMap<string, number>;
  binding_data: Record<string, unknown> | null;
  cloud: DriftContext['cloud'];
}

export interface DriftContext {
  cluster: { id: string; name: string; profile: { type: string; spec: Record<string, unknown> } };
  /** the cluster's ACTIVE nodes, in cluster order */
  nodes: readonly DriftNode[];
  /** the binding's data, as attach returned it */
  binding_data: Record<string, unknown> | null;
  /** Nova facts of the snapshot: zones as `os-availability-zone` returns them, and server groups */
  cloud: { availability_zones: readonly unknown[]; server_groups: readonly ServerGroupFact[] };
}

/** What drift detection reports (issue 6); a type reports only kinds of this list. */
export const DRIFT_FINDING_KINDS = [
  'group_missing',
  'member_outside_group',
  'role_node_ungrouped',
  'hosts_shared',
  'zone_imbalance',
  'policy_unreadable',
] as const;
export type DriftFindingKind = (typeof DRIFT_FINDING_KINDS)[number];

/** One drift a policy type found; the engine adds the policy and binding it belongs to. */
export interface PolicyDriftFinding {
  kind: DriftFindingKind;
  /** the server group concerned (group_missing, member_outside_group, role_node_ungrouped, hosts_shared) */
  group_id?: string;
  group_name?: string;
  /** hosts_shared: the host the nodes share */
  host?: string;
  /** the nodes concerned, in cluster order */
  node_ids: string[];
  /** without the policy's name: the engine prefixes `Policy '<name>': ` */
  message: string;
  /** zone_imbalance: `{expected: {zone: n}, actual: {zone: n}}` */
  detail?: Record<string, unknown>;
}

/** A vanished server group of the binding, as a repair creates it again; a string says why it cannot. */
export type GroupToRecreate = { name: string; policy: string } | string;
