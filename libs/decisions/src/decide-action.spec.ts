import { PolicyRegistry, evaluate } from '@trellis/policies';
import type { ActionEntity } from '@trellis/persistence';
import { createEvaluator, decideAction, type IdSource } from './decide-action';
import { needsNova } from './engine-plan';
import type { Snapshot, SnapshotNode } from './load-snapshot';
import { driftTypesOf } from './drift/detect-drift';

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

  it("decides under the deployment's max_nodes_per_cluster, records it in the input when it is not Senlin's 1000, and the input decides the same again", () => {
    const nodes = [node('n1', 'az1', '2026-11-01T00:00:00.000Z'), node('n2', 'az2', '2026-11-02T00:00:00.000Z')];
    const scaleOut = (count: number) => action('CLUSTER_SCALE_OUT', { count });
    const at = (count: number) => snapshot({ nodes, action: { id: 'a1', action: 'CLUSTER_SCALE_OUT', target: 'c1', inputs: { count }, data: {} } });
    // max_size -1 stands for max_nodes_per_cluster: 3 nodes may be a cluster's most under a limit of 3
    const three = createEvaluator(registry, { maxNodesPerCluster: 3 });
    const refused = decideAction(scaleOut(2), at(2), three, ids());
    expect(refused.failure).toBe('The target capacity (4) is greater than the maximum number of nodes allowed per cluster (3).');
    expect(refused.plan.create_nodes).toHaveLength(0);
    expect(refused.input.max_nodes_per_cluster).toBe(3);
    const allowed = decideAction(scaleOut(1), at(1), three, ids());
    expect(allowed.failure).toBeNull();
    expect(allowed.plan.create_nodes).toHaveLength(1);
    // the stored input, evaluated again with nothing else said, decides the same
    for (const d of [refused, allowed]) {
      const again = evaluate(JSON.parse(JSON.stringify(d.input)), { registry, newId: (k) => `${k}-x` });
      expect({ status: again.status, reason: again.reason, plan: again.plan }).toEqual({
        status: d.output.status,
        reason: d.output.reason,
        plan: d.output.plan,
      });
    }
    // Senlin's default is not written: inputs as they always were
    const usual = decideAction(scaleOut(2), at(2), evaluator, ids());
    expect(usual.failure).toBeNull();
    expect('max_nodes_per_cluster' in usual.input).toBe(false);
    expect(createEvaluator(registry, { maxNodesPerCluster: 1000 }).maxNodesPerCluster).toBe(1000);
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

  it("vouches for the loader's spec digests: a policy kept under the same id, name and digest is used as it is", () => {
    const own = createEvaluator(PolicyRegistry.withBuiltins());
    const scaleOut = { id: 'a1', action: 'CLUSTER_SCALE_OUT', target: 'c1', inputs: { count: 3 }, data: {} };
    const zonesOf = (policy: typeof zonePolicy & { spec_digest: string }) =>
      decideAction(action('CLUSTER_SCALE_OUT', { count: 3 }), snapshot({ policies: [policy], action: scaleOut }), own, ids())
        .plan.create_nodes.map((n) => n.placement.zone)
        .sort();
    expect(zonesOf({ ...zonePolicy, spec_digest: 'd1' })).toEqual(['az1', 'az2', 'az2']);
    // a spec that could never come with this digest from the database: the kept policy answers, which
    // shows the engine's evaluator passes trustSpecDigests (the loader's digests are the specs' own)
    const reweighted = { ...zonePolicy.spec, properties: { zones: [{ name: 'az1', weight: 200 }, { name: 'az2', weight: 100 }] } };
    expect(zonesOf({ ...zonePolicy, spec: reweighted, spec_digest: 'd1' })).toEqual(['az1', 'az2', 'az2']);
    expect(zonesOf({ ...zonePolicy, spec: reweighted, spec_digest: 'd2' })).toEqual(['az1', 'az1', 'az2']);
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

  it('CLUSTER_UPDATE changes the cluster\'s own fields without Nova', () => {
    const d = decideAction(action('CLUSTER_UPDATE', { name: 'renamed', timeout: 60 }), snapshot(), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.cluster_update).toEqual({ name: 'renamed', timeout: 60 });
    expect(d.plan.create_nodes).toEqual([]);
    expect(needsNova(d.plan)).toBe(false);
  });
});

describe("CLUSTER_OPERATION (Senlin's do_operation)", () => {
  it("asks for the operation on the server of each node the request picked, in its order; a node that left is asked for as it is (the worker fails it)", () => {
    const nodes = [node('n1', 'az1', '2026-01-01T00:00:00.000Z'), node('n2', 'az2', '2026-01-02T00:00:00.000Z')];
    const d = decideAction(action('CLUSTER_OPERATION', { operation: 'reboot', params: { type: 'HARD' }, nodes: ['n2', 'gone', 'n1'] }), snapshot({ nodes }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.server_ops).toEqual([
      { node_id: 'n2', physical_id: 'server-n2', op: 'reboot', params: { type: 'HARD' } },
      { node_id: 'gone', physical_id: null, op: 'reboot', params: { type: 'HARD' } },
      { node_id: 'n1', physical_id: 'server-n1', op: 'reboot', params: { type: 'HARD' } },
    ]);
    expect(d.plan.success_reason).toBe("Cluster operation 'reboot' completed.");
    expect(d.plan.create_nodes).toEqual([]);
    expect(d.plan.delete_nodes).toEqual([]);
    expect(needsNova(d.plan)).toBe(true);
  });

  it('fails without a node to operate on', () => {
    const d = decideAction(action('CLUSTER_OPERATION', { operation: 'stop', params: {}, nodes: [] }), snapshot(), evaluator, ids());
    expect(d.failure).toBe('No node (matching the filter) could be found');
  });
});

describe('NODE_UPDATE and CLUSTER_UPDATE to a new profile (Senlin\'s do_update)', () => {
  const props = (over: Record<string, unknown> = {}) => ({ type: 'os.nova.server', version: '1.0', properties: { flavor: 'm1.tiny', image: 'cirros', networks: [], ...over } });
  const profiles = { p1: { type: 'os.nova.server-1.0', spec: props() }, p2: { type: 'os.nova.server-1.0', spec: props({ flavor: 'm1.small', metadata: { tier: 'web' } }) } };
  const member = (id: string, physical: string | null, profile = 'p1') => ({ id, name: id, status: 'ACTIVE', physical_id: physical, profile_id: profile });
  const update = (nodes: ReturnType<typeof member>[], to = 'p2') => ({
    profile: { id: to, ...profiles[to as 'p1' | 'p2'] },
    nodes,
    profiles,
  });
  const nodeAction = (inputs: Record<string, unknown>) =>
    ({ id: 'a1', action: 'NODE_UPDATE', target: 'n1', cluster_id: null, inputs }) as unknown as ActionEntity;
  const nodeSnapshot = (physical: string | null, profileUpdate?: ReturnType<typeof update>): Snapshot => ({
    ...snapshot(),
    cluster: null,
    node: { id: 'n1', name: 'n1', status: 'ACTIVE', physical_id: physical, cluster_id: null },
    ...(profileUpdate ? { profile_update: profileUpdate } : {}),
  });

  it('a node\'s own fields are stored without Nova, the node then ACTIVE', () => {
    const d = decideAction(nodeAction({ name: 'n1b', role: 'db', metadata: { k: 'v' }, tainted: true }), nodeSnapshot('srv-1'), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.node_updates).toEqual([{ node_id: 'n1', name: 'n1b', role: 'db', metadata: { k: 'v' }, tainted: true }]);
    expect(needsNova(d.plan)).toBe(false);
    expect(d.plan.success_reason).toBe('Node updated successfully.');
  });

  it('a node to a new profile: one update op with what changes, the profile stored once it succeeded', () => {
    const d = decideAction(nodeAction({ new_profile_id: 'p2', role: 'web' }), nodeSnapshot('srv-1', update([member('n1', 'srv-1')])), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.server_ops).toEqual([{ node_id: 'n1', physical_id: 'srv-1', op: 'update', params: { flavor: 'm1.small', metadata: { tier: 'web' } } }]);
    expect(d.plan.node_updates).toEqual([{ node_id: 'n1', role: 'web', profile_id: 'p2' }]);
  });

  it('a node without a server is not updated (Senlin\'s do_update returns False)', () => {
    const d = decideAction(nodeAction({ name: 'x' }), nodeSnapshot(null), evaluator, ids());
    expect(d.failure).toBe('Node update failed: the node has no server.');
  });

  it('a profile that changes what Senlin cannot update is refused before Nova', () => {
    const keyed = { ...update([member('n1', 'srv-1')]), profile: { id: 'p3', type: 'os.nova.server-1.0', spec: props({ key_name: 'k2' }) } };
    const d = decideAction(nodeAction({ new_profile_id: 'p3' }), nodeSnapshot('srv-1', keyed), evaluator, ids());
    expect(d.failure).toBe('Node update failed: the following properties are not updatable: key_name.');
    expect(d.plan.server_ops).toBeUndefined();
  });

  const clusterAction = (inputs: Record<string, unknown>) => action('CLUSTER_UPDATE', inputs);

  it('a cluster with profile_only: the cluster\'s profile alone, at once', () => {
    const d = decideAction(clusterAction({ new_profile_id: 'p2', profile_only: true }), snapshot({ profile_update: update([member('m1', 's1')]) }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.cluster_update).toEqual({ profile_id: 'p2' });
    expect(needsNova(d.plan)).toBe(false);
  });

  it('a cluster without profile_only: every member not yet on the profile gets an update op, the cluster the profile when all succeed', () => {
    const nodes = [member('m1', 's1'), member('m2', null), member('m3', 's3', 'p2')];
    const d = decideAction(clusterAction({ new_profile_id: 'p2', name: 'web-2' }), snapshot({ profile_update: update(nodes) }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(d.plan.cluster_update).toEqual({ name: 'web-2' });
    // m2 has no server: the worker fails it, as Senlin's NODE_UPDATE fails
    expect(d.plan.server_ops?.map((o) => [o.node_id, o.physical_id, o.op])).toEqual([['m1', 's1', 'update'], ['m2', null, 'update']]);
    expect(d.plan.node_updates).toEqual([{ node_id: 'm1', profile_id: 'p2' }, { node_id: 'm2', profile_id: 'p2' }]);
    expect(d.plan.cluster_profile_id).toBe('p2');
    expect(d.plan.success_reason).toBe('Cluster update completed.');
  });

  it('an empty cluster takes the new profile at once', () => {
    const d = decideAction(clusterAction({ new_profile_id: 'p2' }), snapshot({ profile_update: update([]) }), evaluator, ids());
    expect(d.failure).toBeNull();
    expect(needsNova(d.plan)).toBe(false);
    expect(d.plan.cluster_profile_id).toBe('p2');
  });

  it('a profile deleted since the request fails the update', () => {
    const d = decideAction(clusterAction({ new_profile_id: 'p9' }), snapshot({ profile_update: { profile: null, nodes: [], profiles: {} } }), evaluator, ids());
    expect(d.failure).toBe("The profile 'p9' could not be found.");
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
  const refusing = { evaluate: () => { throw new Error('cluster: must be an object'); }, priorityOf: () => 0, maxNodesPerCluster: 1000, hypervisorFreeTypes: [], memberFreeTypes: [], summarisedTypes: [], ...driftTypesOf(new PolicyRegistry()) };

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
