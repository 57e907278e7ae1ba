import { PolicyRegistry } from '@trellis/policies';
import type { ActionEntity } from '@trellis/persistence';
import { createEvaluator, decideAction, type IdSource } from './decide-action';
import type { Snapshot, SnapshotNode } from './load-snapshot';

const registry = PolicyRegistry.withBuiltins();
const evaluator = createEvaluator(registry);

function ids(): IdSource {
  let n = 0;
  return {
    uuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    nodeName: () => `node-${n}`,
  };
}

const node = (id: string, zone: string, created: string): SnapshotNode => ({
  id,
  name: id,
  index: 1,
  status: 'ACTIVE',
  created_at: created,
  profile_created_at: '2026-01-01T00:00:00.000Z',
  tainted: false,
  data: { placement: { zone } },
  metadata: {},
  physical_id: `server-${id}`,
  server: { availability_zone: zone, host: null },
});

function snapshot(over: Partial<Snapshot> & { nodes?: SnapshotNode[]; max_size?: number } = {}): Snapshot {
  return {
    hook: 'pre_op',
    policies: [],
    cluster: {
      id: 'c1',
      name: 'web',
      min_size: 0,
      max_size: over.max_size ?? -1,
      desired_capacity: over.nodes?.length ?? 0,
      profile_id: 'p1',
      profile: { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: { flavor: '1', image: 'i' } } },
      nodes: over.nodes ?? [],
    },
    cloud: { availability_zones: ['az1', 'az2'], hypervisors: [], server_groups: [] },
    action: { id: 'a1', action: 'CLUSTER_SCALE_OUT', target: 'c1', inputs: { count: 2 }, data: {} },
    now: '2026-11-22T00:00:00.000Z',
    seed: 7,
    ...over,
  } as Snapshot;
}

const action = (name: string, inputs: Record<string, unknown> = {}) =>
  ({ id: 'a1', action: name, target: 'c1', cluster_id: 'c1', inputs }) as unknown as ActionEntity;

const zonePolicy = {
  id: 'zp',
  name: 'zones',
  type: 'senlin.policy.zone_placement-1.0',
  spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 200 }] } },
  enabled: true,
  binding_id: 'b-zp',
  attached_at: '2026-11-01T00:00:00.000Z',
  binding_data: {},
  last_op: null,
};

describe('decideAction', () => {
  it('CLUSTER_CREATE orders desired_capacity new nodes without running the chain', () => {
    const d = decideAction(action('CLUSTER_CREATE', { desired_capacity: 3 }), snapshot(), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.create_nodes).toHaveLength(3);
    expect(d.plan.success_reason).toBe('Cluster creation succeeded.');
  });

  it('scale-out without policies creates the requested count', () => {
    const d = decideAction(action('CLUSTER_SCALE_OUT', { count: 2 }), snapshot(), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.create_nodes.map((n) => n.placement)).toEqual([{}, {}]);
    expect(d.plan.cluster_update).toEqual({ desired_capacity: 2 });
  });

  it('applies the zone plan: one placement per new node (decision 1)', () => {
    const d = decideAction(action('CLUSTER_SCALE_OUT', { count: 3 }), snapshot({ policies: [zonePolicy], action: { id: 'a1', action: 'CLUSTER_SCALE_OUT', target: 'c1', inputs: { count: 3 }, data: {} } }), evaluator, ids());
    expect(d.failure).toBeNull();
    const zones = d.plan.create_nodes.map((n) => n.placement.zone).sort();
    expect(zones).toEqual(['az1', 'az2', 'az2']);
    expect(d.trace).toHaveLength(1);
  });

  it('fails with Senlin\'s size-check text before touching Nova', () => {
    const d = decideAction(action('CLUSTER_SCALE_OUT', { count: 6 }), snapshot({ max_size: 5, action: { id: 'a1', action: 'CLUSTER_SCALE_OUT', target: 'c1', inputs: { count: 6 }, data: {} } }), evaluator, ids());
    expect(d.failure).toBe("The target capacity (6) is greater than the cluster's max_size (5).");
    expect(d.plan.create_nodes).toEqual([]);
  });

  it('scale-in picks victims and carries their server ids', () => {
    const nodes = [node('n1', 'az1', '2026-01-01T00:00:00.000Z'), node('n2', 'az2', '2026-02-01T00:00:00.000Z')];
    const d = decideAction(action('CLUSTER_SCALE_IN', { count: 1 }), snapshot({ nodes, action: { id: 'a1', action: 'CLUSTER_SCALE_IN', target: 'c1', inputs: { count: 1 }, data: {} } }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.delete_nodes).toHaveLength(1);
    expect(d.plan.delete_nodes[0].physical_id).toBe(`server-${d.plan.delete_nodes[0].node_id}`);
    expect(d.plan.cluster_update).toEqual({ desired_capacity: 1 });
  });

  it('attach of an affinity policy orders its server group and keeps a reference for the binding', () => {
    const affinity = {
      ...zonePolicy,
      id: 'aff',
      name: 'anti',
      type: 'senlin.policy.affinity-1.0',
      spec: { type: 'senlin.policy.affinity', version: '1.0', properties: { servergroup: { name: 'web-group', policies: 'anti-affinity' } } },
      binding_id: null,
      attached_at: null,
    };
    const d = decideAction(action('CLUSTER_ATTACH_POLICY', { policy_id: 'aff', enabled: true }), snapshot({ policies: [affinity] }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.create_groups).toEqual([expect.objectContaining({ name: 'web-group', policy: 'anti-affinity' })]);
    expect(d.plan.binding).toMatchObject({ op: 'attach', policy_id: 'aff', priority: 300 });
    expect(JSON.stringify(d.plan.binding)).toContain(d.plan.create_groups[0].ref);
  });

  it('CLUSTER_UPDATE changes the cluster\'s own fields without Nova, and refuses a new profile', () => {
    const d = decideAction(action('CLUSTER_UPDATE', { name: 'renamed', timeout: 60 }), snapshot(), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.cluster_update).toEqual({ name: 'renamed', timeout: 60 });
    expect(d.plan.create_nodes).toEqual([]);
    const p = decideAction(action('CLUSTER_UPDATE', { new_profile_id: 'p2' }), snapshot(), evaluator, ids());
    expect(p.failure).toBe('Updating the profile of a cluster is not supported by this policy-engine.');
  });
});

describe('a standalone node (no cluster, no policy chain)', () => {
  const standalone = (action: string): ActionEntity =>
    ({ id: 'a-standalone', action, target: 'n-1', cluster_id: null, inputs: {}, data: {} }) as unknown as ActionEntity;
  const lonely = (physical: string | null): Snapshot => ({
    ...snapshot(),
    cluster: null,
    node: { id: 'n-1', name: 'lonely', status: physical ? 'ACTIVE' : 'INIT', physical_id: physical, cluster_id: null },
  });
  const refusing = { evaluate: () => { throw new Error('cluster: must be an object'); }, priorityOf: () => 0 };

  it('creates the server of the node the API made, without evaluating any policy', () => {
    const d = decideAction(standalone('NODE_CREATE'), lonely(null), refusing, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.create_nodes).toEqual([{ node_id: 'n-1', name: 'lonely', index: 0, placement: {} }]);
  });

  it('deletes the server of the node', () => {
    const d = decideAction(standalone('NODE_DELETE'), lonely('srv-1'), refusing, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.delete_nodes).toEqual([{ node_id: 'n-1', physical_id: 'srv-1', destroy: true }]);
  });

  it('fails when the node is gone', () => {
    const d = decideAction(standalone('NODE_DELETE'), { ...lonely(null), node: null }, refusing, ids());
    expect(d.failure).toBe("The node 'n-1' could not be found.");
  });
});
