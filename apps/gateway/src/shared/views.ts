import type {
  ActionEntity,
  ClusterEntity,
  ClusterPolicyEntity,
  EventEntity,
  NodeEntity,
  PolicyEntity,
  ProfileEntity,
} from '@trellis/persistence/entities';
import type { ApiVersion } from '../core/api-version';
import type { JsonText } from '../core/json-text';
import { bool, int, list, listAsText, map, nullable, num, oneOf, optional, str, time, uuid, view, type OutOf } from '../shapes/response';

/**
 * Response shapes: Senlin's `to_dict()` of each object, declared once as the table the OpenAPI
 * document shows and the type each view function returns. Timestamps are `YYYY-MM-DDTHH:MM:SSZ`;
 * keys are sorted on output by the JSON replacer.
 */

const NULLABLE_STRING = nullable(str());

/** What every owned object shows: who made it, in which project, when. */
const OWNED = {
  id: uuid(),
  name: str(),
  user: str({ description: 'Keystone user id of the creator.' }),
  project: str({ description: 'Keystone project id.' }),
  domain: NULLABLE_STRING,
  created_at: time(),
  updated_at: time(),
};

/** What a validate answers (>= 1.2): the object as it would be made, but not stored, so without id or creation time. */
const UNSAVED = { id: nullable(uuid({ example: null, description: 'null: nothing was stored.' })) };
/** An object a validate request checked, as the view functions take it. */
type Unsaved<T> = Omit<T, 'id' | 'created_at'> & { id: null; created_at: null };

const PROFILE = { ...OWNED, type: str({ example: 'os.nova.server-1.0' }), spec: map(), metadata: map() };
export const ProfileView = view('ProfileView', PROFILE);
export const ProfileEnvelope = view('ProfileEnvelope', { profile: ProfileView });
export const ValidatedProfileEnvelope = view('ValidatedProfileEnvelope', { profile: view('ValidatedProfileView', { ...PROFILE, ...UNSAVED }) });
export const ProfileList = view('ProfileList', { profiles: list(ProfileView) });

export const ClusterView = view('ClusterView', {
  ...OWNED,
  profile_id: uuid(),
  profile_name: NULLABLE_STRING,
  init_at: time(),
  min_size: int({ example: 0 }),
  max_size: int({ example: -1, description: '-1: unlimited.' }),
  desired_capacity: int({ example: 2 }),
  timeout: nullable(int({ example: 3600 })),
  status: oneOf(['INIT', 'ACTIVE', 'CREATING', 'UPDATING', 'RESIZING', 'DELETING', 'CHECKING', 'RECOVERING', 'CRITICAL', 'ERROR', 'WARNING', 'OPERATING']),
  status_reason: nullable(str({ example: 'Initializing' })),
  metadata: map(),
  data: map(),
  dependents: map(),
  config: map(),
  nodes: listAsText(str(), { description: 'Member node ids.' }),
  policies: listAsText(str(), { description: 'Policy binding ids (not policy ids).' }),
});
export const ClusterEnvelope = view('ClusterEnvelope', { cluster: ClusterView });
export const ClusterList = view('ClusterList', { clusters: list(ClusterView) });

export const NodeView = view('NodeView', {
  ...OWNED,
  cluster_id: str({ description: "The cluster's id; '' for an orphan node." }),
  physical_id: nullable(str({ description: 'The Nova server id.' })),
  profile_id: uuid(),
  profile_name: NULLABLE_STRING,
  index: int({ example: 1 }),
  role: NULLABLE_STRING,
  init_at: time(),
  status: str({ example: 'ACTIVE' }),
  status_reason: NULLABLE_STRING,
  data: map({ description: 'data.placement.zone is where the zone lands.' }),
  metadata: map(),
  dependents: map(),
  tainted: optional(bool({ description: '>= 1.13.' })),
  details: optional(map({ description: 'Physical details, with show_details=true.' })),
});
export const NodeEnvelope = view('NodeEnvelope', { node: NodeView });
export const NodeList = view('NodeList', { nodes: list(NodeView) });

export const ActionView = view('ActionView', {
  id: uuid(),
  name: str({ example: 'cluster_scale_out_0123abcd' }),
  cluster_id: optional(str({ description: ">= 1.14; '' for an action on an orphan node." })),
  action: str({ example: 'CLUSTER_SCALE_OUT' }),
  target: uuid(),
  cause: str({ example: 'RPC Request' }),
  owner: NULLABLE_STRING,
  interval: int(),
  start_time: nullable(num({ description: 'Epoch seconds.' })),
  end_time: nullable(num({ description: 'Epoch seconds.' })),
  timeout: nullable(int()),
  status: oneOf(['INIT', 'WAITING', 'READY', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'WAITING_LIFECYCLE_COMPLETION']),
  status_reason: NULLABLE_STRING,
  inputs: map(),
  outputs: map({ description: 'nodes_added, nodes_removed.' }),
  depends_on: list(str()),
  depended_by: list(str()),
  created_at: time(),
  updated_at: time(),
  data: map({ description: 'The policy decisions: placement, creation, deletion, status, reason.' }),
  user: str(),
  project: str(),
});
export const ActionEnvelope = view('ActionEnvelope', { action: ActionView });
export const ActionList = view('ActionList', { actions: list(ActionView) });
/** 202 body of the requests that start an action; the Location header points at it. */
export const ActionAccepted = view('ActionAccepted', {
  action: uuid({ description: 'The id of the action to poll at GET /v1/actions/{action_id}.' }),
});

const POLICY = { ...OWNED, type: str({ example: 'senlin.policy.zone_placement-1.0' }), spec: map(), data: map() };
export const PolicyView = view('PolicyView', POLICY);
export const PolicyEnvelope = view('PolicyEnvelope', { policy: PolicyView });
export const ValidatedPolicyEnvelope = view('ValidatedPolicyEnvelope', { policy: view('ValidatedPolicyView', { ...POLICY, ...UNSAVED }) });
export const PolicyList = view('PolicyList', { policies: list(PolicyView) });

export const ClusterPolicyView = view('ClusterPolicyView', {
  id: uuid({ description: 'The binding id.' }),
  cluster_id: uuid(),
  cluster_name: str(),
  policy_id: uuid(),
  policy_name: str(),
  policy_type: str({ example: 'senlin.policy.zone_placement-1.0' }),
  enabled: bool(),
  priority: int({ example: 300 }),
  data: map(),
  last_op: time(),
});
export const ClusterPolicyEnvelope = view('ClusterPolicyEnvelope', { cluster_policy: ClusterPolicyView });
export const ClusterPolicyList = view('ClusterPolicyList', { cluster_policies: list(ClusterPolicyView) });

export const EventView = view('EventView', {
  id: uuid(),
  timestamp: time(),
  oid: NULLABLE_STRING,
  oname: NULLABLE_STRING,
  otype: oneOf(['CLUSTER', 'NODE']),
  cluster_id: str({ description: "'' for an event of an orphan node." }),
  level: str({ example: '20', description: 'Python logging level, as a string.' }),
  user: NULLABLE_STRING,
  project: NULLABLE_STRING,
  action: nullable(str({ example: 'CLUSTER_SCALE_OUT' })),
  status: NULLABLE_STRING,
  status_reason: NULLABLE_STRING,
  meta_data: map(),
});
export const EventEnvelope = view('EventEnvelope', { event: EventView });
export const EventList = view('EventList', { events: list(EventView) });

export function isotime(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  const date = d instanceof Date ? d : new Date(d);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function profileView(p: ProfileEntity): OutOf<typeof ProfileView>;
export function profileView(p: Unsaved<ProfileEntity>): OutOf<typeof ValidatedProfileEnvelope>['profile'];
export function profileView(p: ProfileEntity | Unsaved<ProfileEntity>) {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    user: p.user,
    project: p.project,
    domain: p.domain,
    spec: p.spec,
    metadata: p.metadata ?? {},
    created_at: isotime(p.created_at),
    updated_at: isotime(p.updated_at),
  };
}

export function clusterView(
  c: ClusterEntity,
  extra: { profileName: string | null; nodeIds: string[] | JsonText<string[]>; bindingIds: string[] | JsonText<string[]> },
): OutOf<typeof ClusterView> {
  // keys in the order the answer sorts them: a list of 1,000 clusters is not copied to sort it
  return {
    config: c.config ?? {},
    created_at: isotime(c.created_at),
    data: c.data ?? {},
    dependents: {},
    desired_capacity: c.desired_capacity,
    domain: c.domain,
    id: c.id,
    init_at: isotime(c.init_at),
    max_size: c.max_size,
    metadata: c.metadata ?? {},
    min_size: c.min_size,
    name: c.name,
    nodes: extra.nodeIds,
    policies: extra.bindingIds,
    profile_id: c.profile_id,
    profile_name: extra.profileName,
    project: c.project,
    status: c.status,
    status_reason: c.status_reason,
    timeout: c.timeout,
    updated_at: isotime(c.updated_at),
    user: c.user,
  };
}

export function nodeView(n: NodeEntity, profileName: string | null, version: ApiVersion): OutOf<typeof NodeView> {
  const view: OutOf<typeof NodeView> = {
    id: n.id,
    name: n.name,
    // Senlin stores '' for an orphan node and reports it as such
    cluster_id: n.cluster_id ?? '',
    physical_id: n.physical_id,
    profile_id: n.profile_id,
    profile_name: profileName,
    user: n.user,
    project: n.project,
    domain: n.domain,
    index: n.index,
    role: n.role,
    init_at: isotime(n.init_at),
    created_at: isotime(n.created_at),
    updated_at: isotime(n.updated_at),
    status: n.status,
    status_reason: n.status_reason,
    data: n.data ?? {},
    metadata: n.metadata ?? {},
    dependents: {},
  };
  if (version.atLeast('1.13')) view.tainted = n.tainted;
  return view;
}

/**
 * What Trellis knows about a node's server without asking Nova (the gateway never calls it): the
 * server id, where the worker placed it, and `status: "ACTIVE"` once the worker saw the server
 * ACTIVE (the node turned ACTIVE then). Shown as `details` by node show and cluster collect.
 */
export function recordedServerDetails(n: NodeEntity): Record<string, unknown> {
  const details: Record<string, unknown> = { physical_id: n.physical_id, placement: (n.data as Record<string, unknown>)?.placement ?? {} };
  if (n.physical_id && n.status === 'ACTIVE') details.status = 'ACTIVE';
  return details;
}

export function actionView(a: ActionEntity, version: ApiVersion): OutOf<typeof ActionView> {
  const view: OutOf<typeof ActionView> = {
    id: a.id,
    name: a.name,
    action: a.action,
    target: a.target,
    cause: a.cause,
    owner: a.owner,
    interval: a.interval,
    start_time: a.start_time,
    end_time: a.end_time,
    timeout: a.timeout,
    status: a.status,
    status_reason: a.status_reason,
    inputs: a.inputs ?? {},
    outputs: a.outputs ?? {},
    depends_on: a.depends_on ?? [],
    depended_by: a.depended_by ?? [],
    created_at: isotime(a.created_at),
    updated_at: isotime(a.updated_at),
    data: a.data ?? {},
    user: a.user,
    project: a.project,
  };
  if (version.atLeast('1.14')) view.cluster_id = a.cluster_id ?? '';
  return view;
}

export function policyView(p: PolicyEntity): OutOf<typeof PolicyView>;
export function policyView(p: Unsaved<PolicyEntity>): OutOf<typeof ValidatedPolicyEnvelope>['policy'];
export function policyView(p: PolicyEntity | Unsaved<PolicyEntity>) {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    user: p.user,
    project: p.project,
    domain: p.domain,
    spec: p.spec,
    data: p.data ?? {},
    created_at: isotime(p.created_at),
    updated_at: isotime(p.updated_at),
  };
}

export function bindingView(
  b: ClusterPolicyEntity,
  cluster: { name: string },
  policy: { name: string; type: string },
): OutOf<typeof ClusterPolicyView> {
  return {
    id: b.id,
    cluster_id: b.cluster_id,
    cluster_name: cluster.name,
    policy_id: b.policy_id,
    policy_name: policy.name,
    policy_type: policy.type,
    enabled: b.enabled,
    priority: b.priority,
    data: b.data ?? {},
    last_op: isotime(b.last_op),
  };
}

export function eventView(e: EventEntity): OutOf<typeof EventView> {
  return {
    id: e.id,
    timestamp: isotime(e.timestamp),
    oid: e.oid,
    oname: e.oname,
    otype: e.otype,
    cluster_id: e.cluster_id ?? '',
    level: String(e.level),
    user: e.user,
    project: e.project,
    action: e.action,
    status: e.status,
    status_reason: e.status_reason,
    meta_data: e.meta_data ?? {},
  };
}
