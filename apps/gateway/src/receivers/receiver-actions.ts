/** Senlin's cluster action names (`consts.CLUSTER_ACTION_NAMES`): what a receiver's `action` may name. */
export const CLUSTER_ACTION_NAMES = [
  'CLUSTER_CREATE',
  'CLUSTER_DELETE',
  'CLUSTER_UPDATE',
  'CLUSTER_ADD_NODES',
  'CLUSTER_DEL_NODES',
  'CLUSTER_RESIZE',
  'CLUSTER_CHECK',
  'CLUSTER_RECOVER',
  'CLUSTER_REPLACE_NODES',
  'CLUSTER_SCALE_OUT',
  'CLUSTER_SCALE_IN',
  'CLUSTER_ATTACH_POLICY',
  'CLUSTER_DETACH_POLICY',
  'CLUSTER_UPDATE_POLICY',
  'CLUSTER_OPERATION',
] as const;

/**
 * The actions a Trellis webhook runs, each as the `POST /v1/clusters/{id}/actions` key whose
 * request checks it goes through (the receiver's params are that key's body).
 */
export const WEBHOOK_ACTION_KEYS: Readonly<Record<string, string>> = {
  CLUSTER_SCALE_OUT: 'scale_out',
  CLUSTER_SCALE_IN: 'scale_in',
  CLUSTER_RESIZE: 'resize',
  CLUSTER_CHECK: 'check',
  CLUSTER_ADD_NODES: 'add_nodes',
  CLUSTER_DEL_NODES: 'del_nodes',
  CLUSTER_ATTACH_POLICY: 'policy_attach',
  CLUSTER_DETACH_POLICY: 'policy_detach',
  CLUSTER_UPDATE_POLICY: 'policy_update',
};

export const RECEIVER_TYPES = ['webhook', 'message'] as const;
