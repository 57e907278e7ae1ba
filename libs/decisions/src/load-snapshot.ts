import type { EntityManager } from 'typeorm';
import type { ActionEntity } from '@trellis/persistence';
import { CloudFactKinds } from '@trellis/contracts';

/**
 * The input snapshot of a decision (decision 17): everything the policies may look at, read in the
 * caller's transaction. The shape is the public evaluation format of `trellis evaluate`.
 */
export interface Snapshot {
  /** 'none': the action ran no policy hook (recorded for explanation, not replayable) */
  hook: 'pre_op' | 'post_op' | 'attach' | 'detach' | 'none';
  policies: SnapshotPolicy[];
  cluster: SnapshotCluster | null;
  cloud: { availability_zones: unknown[]; hypervisors: unknown[]; server_groups: unknown[]; unreadable?: Record<string, string> };
  action: { id: string; action: string; target: string; inputs: Record<string, unknown>; data: Record<string, unknown> };
  now: string;
  seed: number;
  [extra: string]: unknown;
}

export interface SnapshotPolicy {
  id: string;
  name: string;
  type: string;
  spec: Record<string, unknown>;
  enabled: boolean;
  binding_id: string | null;
  attached_at: string | null;
  binding_data: Record<string, unknown>;
  last_op: string | null;
}

export interface SnapshotNode {
  id: string;
  name: string;
  index: number;
  status: string;
  created_at: string | null;
  profile_created_at: string | null;
  tainted: boolean;
  data: Record<string, unknown>;
  /** the node's own metadata (e.g. `roles`), which wins over the profile's */
  metadata: Record<string, unknown>;
  physical_id: string | null;
  server: { availability_zone: string | null; host: string | null };
}

export interface SnapshotCluster {
  id: string;
  name: string;
  min_size: number;
  max_size: number;
  desired_capacity: number;
  profile_id: string;
  profile: { type: string; spec: Record<string, unknown> };
  nodes: SnapshotNode[];
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** SQL for a timestamptz as `YYYY-MM-DDTHH:MM:SS.sssZ`, exactly what Date.toISOString() writes */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A seed derived from the action id, so random choices (victims, group names) replay identically. */
export function seedOf(actionId: string): number {
  let h = 2166136261;
  for (let i = 0; i < actionId.length; i++) h = Math.imul(h ^ actionId.charCodeAt(i), 16777619);
  return h >>> 0;
}

export async function loadCluster(m: EntityManager, clusterId: string): Promise<SnapshotCluster | null> {
  const rows: Array<Record<string, any>> = await m.query(
    `SELECT c.id, c.name, c.min_size, c.max_size, c.desired_capacity, c.profile_id, p.type AS profile_type, p.spec AS profile_spec
       FROM clusters c JOIN profiles p ON p.id = c.profile_id WHERE c.id = $1`,
    [clusterId],
  );
  if (!rows.length) return null;
  const c = rows[0];
  // One query, only the columns a policy looks at: this load sits on every decision's path.
  const nodes: Array<Record<string, any>> = await m.query(
    // timestamps come back as ISO text (Date.toISOString's format): no Date per node to parse and format
    `SELECT n.id, n.name, n.index, n.status, ${isoText('n.created_at')} AS created_at, n.tainted, n.data, n.metadata, n.physical_id,
            ${isoText('p.created_at')} AS profile_created_at
       FROM nodes n JOIN profiles p ON p.id = n.profile_id
      WHERE n.cluster_id = $1 ORDER BY n.index`,
    [clusterId],
  );
  return {
    id: c.id,
    name: c.name,
    min_size: c.min_size,
    max_size: c.max_size,
    desired_capacity: c.desired_capacity,
    profile_id: c.profile_id,
    profile: { type: c.profile_type, spec: c.profile_spec },
    nodes: nodes.map((n) => {
      const placement = (n.data?.placement ?? {}) as Record<string, unknown>;
      return {
        id: n.id,
        name: n.name,
        index: n.index,
        status: n.status,
        created_at: n.created_at,
        profile_created_at: n.profile_created_at,
        tainted: n.tainted,
        data: n.data ?? {},
        metadata: n.metadata ?? {},
        physical_id: n.physical_id,
        server: {
          availability_zone: typeof placement.zone === 'string' ? placement.zone : null,
          host: typeof placement.host === 'string' ? placement.host : null,
        },
      };
    }),
  };
}

export async function loadBindings(m: EntityManager, clusterId: string): Promise<SnapshotPolicy[]> {
  const rows: Array<Record<string, any>> = await m.query(
    `SELECT b.id AS binding_id, b.enabled, b.data, b.last_op, b.attached_at, b.priority,
            p.id, p.name, p.type, p.spec
       FROM cluster_policies b JOIN policies p ON p.id = b.policy_id
      WHERE b.cluster_id = $1
      ORDER BY b.priority, b.attached_at, b.id`,
    [clusterId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    type: r.type,
    spec: r.spec,
    enabled: r.enabled,
    binding_id: r.binding_id,
    attached_at: iso(r.attached_at),
    binding_data: r.data ?? {},
    last_op: iso(r.last_op),
  }));
}

async function loadPolicy(m: EntityManager, policyId: string): Promise<SnapshotPolicy | null> {
  const rows: Array<Record<string, any>> = await m.query(`SELECT id, name, type, spec FROM policies WHERE id = $1`, [policyId]);
  if (!rows.length) return null;
  const r = rows[0];
  return { id: r.id, name: r.name, type: r.type, spec: r.spec, enabled: true, binding_id: null, attached_at: null, binding_data: {}, last_op: null };
}

export async function loadCloud(m: EntityManager): Promise<Snapshot['cloud']> {
  const rows: Array<{ kind: string; data: { items?: unknown[]; error?: string } }> = await m.query(`SELECT kind, data FROM cloud_facts`);
  const items = (kind: string) => rows.find((r) => r.kind === kind)?.data?.items ?? [];
  const cloud: Snapshot['cloud'] = {
    availability_zones: items(CloudFactKinds.availabilityZones),
    hypervisors: items(CloudFactKinds.hypervisors),
    server_groups: items(CloudFactKinds.serverGroups),
  };
  // a fact the worker could not read (e.g. hypervisors without the admin role) is empty for the
  // policies; the decision record says why
  const unreadable = Object.fromEntries(rows.filter((r) => r.data?.error).map((r) => [r.kind, r.data.error as string]));
  if (Object.keys(unreadable).length) cloud.unreadable = unreadable;
  return cloud;
}

export async function loadSnapshot(
  m: EntityManager,
  action: ActionEntity,
  hook: Snapshot['hook'],
  now: Date,
): Promise<Snapshot> {
  const clusterId = action.cluster_id;
  const [cluster, policies, cloud] = clusterId
    ? [await loadCluster(m, clusterId), await loadBindings(m, clusterId), await loadCloud(m)]
    : [null, [], await loadCloud(m)];
  if (action.action === 'CLUSTER_ATTACH_POLICY' && typeof action.inputs.policy_id === 'string') {
    // the policy being attached is not bound yet: it joins the snapshot without a binding
    const attaching = await loadPolicy(m, action.inputs.policy_id);
    if (attaching && !policies.some((p) => p.id === attaching.id)) policies.push(attaching);
  }
  return {
    hook,
    policies,
    cluster,
    cloud,
    action: { id: action.id, action: action.action, target: action.target, inputs: action.inputs, data: action.data ?? {} },
    now: now.toISOString(),
    seed: seedOf(action.id),
  };
}
