/**
 * The snapshot shapes a decision is computed from (decision 17). Field names follow Senlin's and
 * Nova's JSON so a stored snapshot reads like the API it came from.
 */

export type When = 'BEFORE' | 'AFTER';
export type HookName = 'validate' | 'attach' | 'detach' | 'pre_op' | 'post_op' | 'need_check' | 'drift';

export interface SupportStatus {
  status: 'EXPERIMENTAL' | 'SUPPORTED' | 'DEPRECATED' | 'UNSUPPORTED';
  since: string;
}
export type VersionsMap = Record<string, SupportStatus[]>;

export interface NodePlacement {
  zone?: string | null;
  servergroup?: string | null;
  host?: string | null;
  [key: string]: unknown;
}

export interface NodeSnapshot {
  id: string;
  name?: string;
  status?: string;
  created_at?: string | null;
  profile_created_at?: string | null;
  tainted?: boolean;
  data?: { placement?: NodePlacement | null; [key: string]: unknown } | null;
  /** what Nova reports for the node's server (OS-EXT-AZ:availability_zone, OS-EXT-SRV-ATTR:host) */
  server?: { availability_zone?: string | null; host?: string | null } | null;
}

export interface ProfileSnapshot {
  /** e.g. `os.nova.server-1.0` */
  type: string;
  spec: Record<string, unknown>;
}

export interface ClusterSnapshot {
  id: string;
  name: string;
  min_size: number;
  max_size: number;
  desired_capacity: number;
  profile: ProfileSnapshot;
  /** every node; with `summary`, only the nodes it says are listed (framework/summary.ts) */
  nodes: readonly NodeSnapshot[];
  summary?: ClusterSummary;
}

/**
 * The counts of a summarised cluster (framework/summary.ts): the database counts, the node list
 * holds only the nodes a decision may need by name.
 */
export interface ClusterSummary {
  /** every node of the cluster, listed or not */
  node_count: number;
  /** ACTIVE nodes */
  active_count: number;
  /**
   * nodes per zone (the zone a node recorded, else the one Nova reports), by name; a node without
   * one is in none. `listed`: how many of the zone's nodes are listed in each of `orders`, where the
   * zone has its own depth (a zone placement plan bounds what it can give); else the summary's.
   */
  zones: Array<{ name: string; nodes: number; active: number; listed?: number }>;
  /** per zone without its own `listed`, and among the nodes without a zone: how many nodes are listed in each of `orders` */
  listed: number;
  /** the orders victims may be picked in, whose first `listed` nodes are in the list */
  orders: VictimOrder[];
  /**
   * Nodes per server group they recorded (`data.placement.servergroup`, a string), by id, sorted;
   * listed when a policy that is not built in is bound (serverGroupMembers reads it).
   */
  groups?: Array<{ id: string; nodes: number }>;
}

/** Victim orders (senlin-behaviour §3.5): created_at ascending or descending, profile created_at ascending. */
export type VictimOrder = 'oldest' | 'youngest' | 'profile';

/** action.data: Senlin's policy decision keys (senlin-behaviour §2.1) plus whatever plugins add. */
export type ActionData = Record<string, unknown>;

export interface PolicyAction {
  /** e.g. CLUSTER_SCALE_OUT */
  action: string;
  /** the node for NODE_CREATE / NODE_DELETE, the cluster otherwise */
  target: string | null;
  inputs: Record<string, unknown>;
  /**
   * Policies replace top-level values instead of mutating nested objects in place
   * (`data.creation = {...data.creation, count}`): the chain detects changes by reference.
   */
  data: ActionData;
}

export interface BindingSnapshot {
  id: string;
  enabled: boolean;
  attached_at: string | null;
  /** `{"<ClassName>": {"version", "data"}}` as the policy's attach returned it */
  data: Record<string, unknown> | null;
  last_op: string | null;
}
