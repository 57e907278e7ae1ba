import type { Snapshot, SnapshotNode, SnapshotPolicy } from '@trellis/decisions';

// Snapshots for drift detection and repair specs: a cluster 'hdp' whose profile gives every node the
// role 'db', two available zones, a role anti-affinity binding with one group 'g1' and a zone
// placement binding weighing both zones equally.

export const node = (id: string, index: number, over: { group?: string; host?: string; zone?: string; status?: string; roles?: string } = {}): SnapshotNode => ({
  id,
  name: id,
  index,
  status: over.status ?? 'ACTIVE',
  created_at: null,
  profile_created_at: null,
  tainted: false,
  data: { placement: { ...(over.group ? { servergroup: over.group } : {}), ...(over.zone ? { zone: over.zone } : {}), ...(over.host ? { host: over.host } : {}) } },
  metadata: over.roles === undefined ? {} : { roles: over.roles },
  physical_id: `srv-${id}`,
  server: { availability_zone: over.zone ?? null, host: over.host ?? null },
});

export const aa: SnapshotPolicy = {
  id: 'p-aa',
  name: 'apart',
  type: 'trellis.policy.role_anti_affinity-1.0',
  spec: { type: 'trellis.policy.role_anti_affinity', version: '1.0', properties: { roles: ['db'] } },
  enabled: true,
  binding_id: 'b-aa',
  attached_at: null,
  binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: 'g1', name: 'hdp-aa-1', created: true }] } } },
  last_op: null,
};

export const zones: SnapshotPolicy = {
  ...aa,
  id: 'p-z',
  name: 'zones',
  type: 'senlin.policy.zone_placement-1.0',
  spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } },
  binding_id: 'b-z',
  binding_data: {},
};

export function snapshot(nodes: SnapshotNode[], policies: SnapshotPolicy[], groups: Array<{ id: string; members: string[] }>): Snapshot {
  return {
    hook: 'none',
    policies,
    cluster: {
      id: 'c1',
      name: 'hdp',
      min_size: 0,
      max_size: -1,
      desired_capacity: nodes.length,
      profile_id: 'pr',
      profile: { type: 'os.nova.server-1.0', spec: { properties: { metadata: { roles: 'db' } } } },
      nodes,
    },
    cloud: {
      availability_zones: [{ zoneName: 'az1', zoneState: { available: true } }, { zoneName: 'az2', zoneState: { available: true } }],
      hypervisors: [],
      server_groups: groups.map((g) => ({ ...g, name: 'hdp-aa-1', policy: 'anti-affinity' })),
    },
    action: { id: 'a1', action: 'CLUSTER_REPAIR', target: 'c1', inputs: {}, data: {} },
    now: '2026-11-22T00:00:00.000Z',
    seed: 1,
  } as Snapshot;
}
