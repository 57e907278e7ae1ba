import type { Snapshot, SnapshotNode, SnapshotPolicy } from '../load-snapshot';
import type { IdSource } from '../ids';
import { detectClusterDrift } from './detect-drift';
import { planRepair } from './plan-repair';
import { fingerprintOf } from './findings';

function ids(): IdSource {
  let n = 0;
  return { uuid: () => `id-${++n}`, nodeName: () => `new-${n}` };
}

const node = (id: string, index: number, over: { group?: string; host?: string; zone?: string; status?: string; roles?: string } = {}): SnapshotNode => ({
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

const aa: SnapshotPolicy = {
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

const zones: SnapshotPolicy = {
  ...aa,
  id: 'p-z',
  name: 'zones',
  type: 'senlin.policy.zone_placement-1.0',
  spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } },
  binding_id: 'b-z',
  binding_data: {},
};

function snapshot(nodes: SnapshotNode[], policies: SnapshotPolicy[], groups: Array<{ id: string; members: string[] }>): Snapshot {
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

describe('detectClusterDrift', () => {
  it('finds nothing when the role nodes are members of their group on distinct hosts', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h2' })];
    expect(detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2'] }]))).toEqual([]);
  });

  it('reports a vanished group with the nodes placed in it, named after the policy', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h2' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], []));
    expect(found).toEqual([
      expect.objectContaining({ kind: 'group_missing', group_id: 'g1', group_name: 'hdp-aa-1', policy_id: 'p-aa', binding_id: 'b-aa', node_ids: ['n1', 'n2'] }),
    ]);
    expect(found[0].message).toContain("Policy 'apart'");
  });

  it('reports two members on one host, but ignores nodes that are not ACTIVE', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' }), node('n3', 3, { group: 'g1', host: 'h1', status: 'DELETING' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2', 'srv-n3'] }]));
    expect(found).toEqual([expect.objectContaining({ kind: 'hosts_shared', host: 'h1', node_ids: ['n1', 'n2'] })]);
  });

  it('reports role nodes in no group (a cluster created before the policy), not nodes without the role', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { host: 'h2' }), node('edge', 3, { host: 'h3', roles: '' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1'] }]));
    expect(found).toEqual([expect.objectContaining({ kind: 'role_node_ungrouped', group_id: 'g1', node_ids: ['n2'] })]);
  });

  it('reports a zone distribution more than one node off its weights, not one node off', () => {
    const three = [node('a', 1, { zone: 'az1' }), node('b', 2, { zone: 'az1' }), node('c', 3, { zone: 'az1' }), node('d', 4, { zone: 'az2' })];
    expect(detectClusterDrift(snapshot(three.slice(0, 3).concat([node('e', 5, { zone: 'az2' }), node('f', 6, { zone: 'az2' })]), [zones], []))).toEqual([]);
    const off = detectClusterDrift(snapshot([...three, node('e', 5, { zone: 'az1' }), node('f', 6, { zone: 'az1' })], [zones], []));
    expect(off).toEqual([
      expect.objectContaining({ kind: 'zone_imbalance', detail: { expected: { az1: 3, az2: 3 }, actual: { az1: 5, az2: 1 } }, node_ids: ['a', 'b', 'c', 'e', 'f'] }),
    ]);
  });

  it('turns binding data it cannot read into a finding naming the field, instead of throwing', () => {
    const broken = { ...aa, binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: '' }] } } } };
    const found = detectClusterDrift(snapshot([node('n1', 1, { group: 'g1' })], [broken], []));
    expect(found).toEqual([expect.objectContaining({ kind: 'policy_unreadable' })]);
    expect(found[0].message).toContain('groups[0].id');
  });

  it('gives the same drift the same fingerprint whatever the node order', () => {
    const f = { kind: 'hosts_shared' as const, policy_id: 'p', group_id: 'g', host: 'h', node_ids: ['b', 'a'] };
    expect(fingerprintOf(f)).toBe(fingerprintOf({ ...f, node_ids: ['a', 'b'] }));
  });
});

describe('planRepair', () => {
  it('creates a vanished group again under its name and replaces every node placed in it, keeping zones', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1', zone: 'az1' }), node('n2', 2, { group: 'g1', host: 'h2', zone: 'az2' })];
    const snap = snapshot(nodes, [aa], []);
    const plan = planRepair(snap, detectClusterDrift(snap), ids(), 'groups');
    expect(plan.groups).toEqual([{ ref: 'ref:server_group:id-1', name: 'hdp-aa-1', policy: 'anti-affinity', replaces: 'g1', binding_id: 'b-aa' }]);
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement])).toEqual([
      ['n1', { zone: 'az1', servergroup: 'ref:server_group:id-1' }],
      ['n2', { zone: 'az2', servergroup: 'ref:server_group:id-1' }],
    ]);
    expect(plan.binding_updates).toEqual([
      { binding_id: 'b-aa', data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: 'ref:server_group:id-1', name: 'hdp-aa-1', created: true }] } } } },
    ]);
  });

  it('keeps the first of the nodes sharing a host and replaces the others into the same group', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' }), node('n3', 3, { group: 'g1', host: 'h1' })];
    const snap = snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2', 'srv-n3'] }]);
    const plan = planRepair(snap, detectClusterDrift(snap), ids(), 'all');
    expect(plan.groups).toEqual([]);
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement.servergroup, r.reasons])).toEqual([
      ['n2', 'g1', ['hosts_shared']],
      ['n3', 'g1', ['hosts_shared']],
    ]);
  });

  it('a growing action repairs groups only: shared hosts are left for the repair action', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' })];
    const snap = snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2'] }]);
    expect(planRepair(snap, detectClusterDrift(snap), ids(), 'groups').replacements).toEqual([]);
  });

  it('rebalances zones by moving the newest nodes of the zone over its share', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((id, i) => node(id, i + 1, { zone: 'az1' }));
    const snap = snapshot(nodes, [zones], []);
    const plan = planRepair(snap, detectClusterDrift(snap), ids(), 'all');
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement.zone])).toEqual([
      ['c', 'az2'],
      ['d', 'az2'],
    ]);
  });
});
