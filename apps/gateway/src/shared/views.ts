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

/**
 * Response shapes: Senlin's `to_dict()` of each object. Timestamps are `YYYY-MM-DDTHH:MM:SSZ`;
 * keys are sorted on output by the JSON replacer.
 */

export function isotime(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  const date = d instanceof Date ? d : new Date(d);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function profileView(p: ProfileEntity) {
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

export function clusterView(c: ClusterEntity, extra: { profileName: string | null; nodeIds: string[]; bindingIds: string[] }) {
  return {
    id: c.id,
    name: c.name,
    profile_id: c.profile_id,
    profile_name: extra.profileName,
    user: c.user,
    project: c.project,
    domain: c.domain,
    init_at: isotime(c.init_at),
    created_at: isotime(c.created_at),
    updated_at: isotime(c.updated_at),
    min_size: c.min_size,
    max_size: c.max_size,
    desired_capacity: c.desired_capacity,
    timeout: c.timeout,
    status: c.status,
    status_reason: c.status_reason,
    metadata: c.metadata ?? {},
    data: c.data ?? {},
    dependents: {},
    config: c.config ?? {},
    nodes: extra.nodeIds,
    policies: extra.bindingIds,
  };
}

export function nodeView(n: NodeEntity, profileName: string | null, version: ApiVersion) {
  const view: Record<string, unknown> = {
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

export function actionView(a: ActionEntity, version: ApiVersion) {
  const view: Record<string, unknown> = {
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

export function policyView(p: PolicyEntity) {
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

export function bindingView(b: ClusterPolicyEntity, cluster: { name: string }, policy: { name: string; type: string }) {
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

export function eventView(e: EventEntity) {
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
