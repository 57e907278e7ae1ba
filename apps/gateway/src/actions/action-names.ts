import type { ClusterActionName } from '@trellis/contracts';

/** Senlin's action names are `<prefix>_<first 8 chars of the target id>`. */
const PREFIX: Record<ClusterActionName, string> = {
  CLUSTER_CREATE: 'cluster_create',
  CLUSTER_DELETE: 'cluster_delete',
  CLUSTER_UPDATE: 'cluster_update',
  CLUSTER_SCALE_OUT: 'cluster_scale_out',
  CLUSTER_SCALE_IN: 'cluster_scale_in',
  CLUSTER_RESIZE: 'cluster_resize',
  CLUSTER_ADD_NODES: 'cluster_add_nodes',
  CLUSTER_DEL_NODES: 'cluster_del_nodes',
  CLUSTER_ATTACH_POLICY: 'attach_policy',
  CLUSTER_DETACH_POLICY: 'detach_policy',
  CLUSTER_UPDATE_POLICY: 'update_policy',
  CLUSTER_CHECK: 'cluster_check',
  CLUSTER_REPAIR: 'cluster_repair',
  CLUSTER_RECOVER: 'cluster_recover',
  CLUSTER_REPLACE_NODES: 'cluster_replace_nodes',
  NODE_CREATE: 'node_create',
  NODE_DELETE: 'node_delete',
  NODE_UPDATE: 'node_update',
  NODE_CHECK: 'node_check',
  NODE_RECOVER: 'node_recover',
  NODE_OPERATION: 'node_operation',
  // Senlin names it after the operation (cluster_reboot_1a2b3c4d): the submitter is given that name
  CLUSTER_OPERATION: 'cluster_operation',
};

export const actionName = (action: ClusterActionName, targetId: string) => `${PREFIX[action]}_${targetId.slice(0, 8)}`;

/** Actions that skip the lock and conflict checks (Senlin let deletes through). */
export const BYPASS_CONFLICT_CHECKS: readonly ClusterActionName[] = ['CLUSTER_DELETE', 'NODE_DELETE', 'NODE_OPERATION'];
