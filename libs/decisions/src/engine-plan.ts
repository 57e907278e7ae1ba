import type { PlacementDto, ServerGroupCreateDto, ServerOpDto } from '@trellis/contracts';
import type { Finding } from './drift/findings';
import type { RepairPlan } from './drift/plan-repair';

/**
 * What the engine will do for one action, derived from the chain's output and stored with the
 * decision: the node rows it adds or removes, the Nova work it orders, and what it changes in the
 * database once the worker reports back.
 */
export interface EnginePlan {
  create_nodes: Array<{ node_id: string; name: string; index: number; placement: PlacementDto }>;
  delete_nodes: Array<{ node_id: string; physical_id: string | null; destroy: boolean }>;
  create_groups: ServerGroupCreateDto[];
  delete_groups: Array<{ id: string }>;
  /** cluster sizes to store when the action starts (Senlin sets desired_capacity before creating) */
  cluster_update: {
    desired_capacity?: number;
    min_size?: number;
    max_size?: number;
    name?: string;
    timeout?: number;
    metadata?: Record<string, unknown>;
    config?: Record<string, unknown>;
    /** CLUSTER_UPDATE with profile_only: the cluster's profile, its nodes keep theirs */
    profile_id?: string;
  } | null;
  /** binding change applied when the action succeeds */
  binding:
    | { op: 'attach'; binding_id: string; policy_id: string; enabled: boolean; priority: number; data: Record<string, unknown> }
    | { op: 'detach'; binding_id: string }
    | { op: 'update'; binding_id: string; enabled: boolean }
    | null;
  /** CLUSTER_DELETE: remove the cluster row once its nodes are gone */
  delete_cluster: boolean;
  /** the action's status_reason when everything it ordered succeeds */
  success_reason: string;
  /** the policies' own plan (placements per new node, victims per zone), kept for explanation */
  policy_plan: Record<string, unknown> | null;
  /** CLUSTER_CHECK / CLUSTER_REPAIR: where the cloud strays from the policies (issue 6) */
  findings?: Finding[];
  /** CLUSTER_REPAIR: the groups to create again and the nodes to replace, one at a time */
  repair?: RepairPlan;
  /**
   * CLUSTER_ADD_NODES / CLUSTER_REPLACE_NODES: orphan nodes that join the cluster and members that
   * leave it (their servers keep running), applied when the action is decided; no Nova call
   */
  membership?: { join: string[]; leave: string[] };
  /** NODE_CHECK / NODE_RECOVER / NODE_OPERATION / NODE_UPDATE / CLUSTER_UPDATE: what the worker does to existing servers */
  server_ops?: ServerOpDto[];
  /**
   * NODE_UPDATE / CLUSTER_UPDATE with a new profile: what each node stores once its update
   * succeeded (Senlin's node.do_update: then ACTIVE 'Update succeeded'); a node whose server
   * update failed keeps its old values
   */
  node_updates?: NodeUpdate[];
  /** CLUSTER_UPDATE that moves every node to a new profile: the cluster's profile once all succeeded */
  cluster_profile_id?: string;
}

export interface NodeUpdate {
  node_id: string;
  name?: string;
  role?: string;
  metadata?: Record<string, unknown>;
  tainted?: boolean;
  profile_id?: string;
}

export const emptyPlan = (): EnginePlan => ({
  create_nodes: [],
  delete_nodes: [],
  create_groups: [],
  delete_groups: [],
  cluster_update: null,
  binding: null,
  delete_cluster: false,
  success_reason: 'Action completed.',
  policy_plan: null,
});

export const needsNova = (p: EnginePlan) =>
  p.create_nodes.length + p.delete_nodes.length + p.create_groups.length + p.delete_groups.length + (p.server_ops?.length ?? 0) > 0;
