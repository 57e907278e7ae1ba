/** Vocabulary shared by every service (Senlin's names). */
export const ActionStatuses = [
  'INIT',
  'WAITING',
  'READY',
  'RUNNING',
  'SUSPENDED',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'WAITING_LIFECYCLE_COMPLETION',
] as const;
export type ActionStatus = (typeof ActionStatuses)[number];
export const ActiveActionStatuses: ActionStatus[] = ['READY', 'WAITING', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION'];
export const FinalActionStatuses: ActionStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export const ClusterActions = [
  'CLUSTER_CREATE',
  'CLUSTER_DELETE',
  'CLUSTER_UPDATE',
  'CLUSTER_SCALE_OUT',
  'CLUSTER_SCALE_IN',
  'CLUSTER_RESIZE',
  'CLUSTER_ADD_NODES',
  'CLUSTER_DEL_NODES',
  'CLUSTER_ATTACH_POLICY',
  'CLUSTER_DETACH_POLICY',
  'CLUSTER_UPDATE_POLICY',
  'CLUSTER_CHECK',
  'CLUSTER_REPAIR',
  'CLUSTER_RECOVER',
  'CLUSTER_REPLACE_NODES',
  'NODE_CREATE',
  'NODE_DELETE',
  'NODE_UPDATE',
  'NODE_CHECK',
  'NODE_RECOVER',
  'NODE_OPERATION',
  'CLUSTER_OPERATION',
] as const;
export type ClusterActionName = (typeof ClusterActions)[number];

export const ClusterStatuses = [
  'INIT',
  'ACTIVE',
  'CREATING',
  'UPDATING',
  'RESIZING',
  'DELETING',
  'CHECKING',
  'RECOVERING',
  'CRITICAL',
  'ERROR',
  'WARNING',
  'OPERATING',
] as const;
export type ClusterStatus = (typeof ClusterStatuses)[number];

export const NodeStatuses = ['INIT', 'CREATING', 'ACTIVE', 'ERROR', 'WARNING', 'DELETING', 'DELETED', 'UPDATING', 'OPERATING'] as const;
export type NodeStatus = (typeof NodeStatuses)[number];

export const PROFILE_TYPE_NOVA_SERVER = 'os.nova.server-1.0';

/**
 * Kinds of Nova facts the nova-worker keeps in `cloud_facts` for the policy-engine. `server_groups`
 * are stored per project (what Nova shows that project); the others are cloud-wide, stored under
 * `CLOUD_WIDE_PROJECT`. `host_zones` is the host → zone map of Nova's admin
 * `os-availability-zone/detail` (`[{zoneName, hosts: [names]}]`): the gateway reads it to know which
 * strings are host names, the policies do not use it.
 */
export const CloudFactKinds = {
  availabilityZones: 'availability_zones',
  hypervisors: 'hypervisors',
  hostZones: 'host_zones',
  serverGroups: 'server_groups',
} as const;

/** The `cloud_facts.project` of a cloud-wide fact. */
export const CLOUD_WIDE_PROJECT = '';
