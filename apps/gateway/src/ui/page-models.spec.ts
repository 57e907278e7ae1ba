/**
 * The pure parts of the web page (static/*.js, plain ES modules the browser loads as they are):
 * what the placement map, a decision's readable form and an action's progress are made of. How
 * they look in a browser is test/ui's part.
 */
const { placementMap } = require('./static/placement.js') as { placementMap: (input: object) => any };
const { readDecision, readable } = require('./static/decision.js') as { readDecision: (d: object) => any; readable: (t: string, names: Map<string, string>) => string };
const { actionProgress, progressText } = require('./static/progress.js') as { actionProgress: (d: object | null, n: object[]) => any; progressText: (p: object) => string };

const GROUP = 'b0913a7a-335e-47b1-b559-f46b8f063cf5';
const HOST_ID = '2f3584636b1bfa4fec0dfaaee511f5a2cd1f0a13b477648a35687cb8';
const node = (name: string, zone: string | null, host: string | null, status = 'ACTIVE', extra: object = {}) => ({
  id: `${name}-id`,
  name,
  status,
  role: null,
  metadata: {},
  data: zone ? { placement: { zone, ...(host ? { host } : {}), servergroup: GROUP } } : {},
  ...extra,
});
const zonesBinding = { enabled: true, policy_id: 'p-zones', policy_name: 'zones', policy_type: 'senlin.policy.zone_placement-1.0', data: {} };
const zonesPolicy = { id: 'p-zones', spec: { type: 'senlin.policy.zone_placement', version: 1, properties: { zones: [{ name: 'az1', weight: 200 }, { name: 'az2', weight: 100 }, { name: 'az3' }] } } };
const aaBinding = {
  enabled: true,
  policy_id: 'p-aa',
  policy_name: 'db-apart',
  policy_type: 'trellis.policy.role_anti_affinity-1.0',
  data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: GROUP, name: 'db-aa-1' }] } } },
};

describe('the placement map', () => {
  const map = placementMap({
    nodes: [node('n1', 'az1', 'host-1'), node('n2', 'az1', 'host-2'), node('n3', 'az1', 'host-1', 'ERROR', { role: 'master' }), node('n4', 'az2', HOST_ID), node('n5', null, null, 'CREATING')],
    bindings: [zonesBinding, aaBinding],
    policies: new Map([['p-zones', zonesPolicy]]),
    decision: {
      input: {
        cloud: { availability_zones: [{ zoneName: 'az1' }, 'az2', 'az4'], hypervisors: [{ hypervisor_hostname: 'host-1', service: { host: 'host-1' } }, { service: { host: 'host-9' } }], server_groups: [] },
        cluster: { profile: { spec: { properties: { metadata: { roles: 'db' } } } } },
      },
    },
  });

  it("has a column per zone Nova or the zone policy names, with the weights beside the real counts, and one for nodes not placed yet", () => {
    expect(map.zones).toEqual([
      { name: 'az1', count: 3, weight: 200, share: 0.5, expected: 2.5 },
      { name: 'az2', count: 1, weight: 100, share: 0.25, expected: 1.25 },
      { name: 'az3', count: 0, weight: 100, share: 0.25, expected: 1.25 },
      { name: 'az4', count: 0, weight: 0, share: 0, expected: 0 },
      { name: '', count: 1, weight: null, share: null, expected: null },
    ]);
    expect(map.weighted).toBe('zones');
    expect(map.total).toBe(5);
  });

  it('has a row per host, each node in the cell of its zone with its status, role and server group', () => {
    expect(map.rows.map((r: any) => r.host)).toEqual(['host-1', 'host-2', HOST_ID, '']);
    expect(map.rows[0].cells.az1).toEqual([
      { id: 'n1-id', name: 'n1', status: 'ACTIVE', role: 'db', group: 'db-aa-1' },
      { id: 'n3-id', name: 'n3', status: 'ERROR', role: 'master', group: 'db-aa-1' },
    ]);
    expect(map.rows[3].cells['']).toEqual([{ id: 'n5-id', name: 'n5', status: 'CREATING', role: 'db', group: '' }]);
  });

  it("lists the server groups with their policy, and the hosts Nova reports that hold none of the cluster's nodes", () => {
    expect(map.groups).toEqual([{ id: GROUP, name: 'db-aa-1', policy: 'anti-affinity', members: 4 }]);
    expect(map.otherHosts).toEqual(['host-9']);
  });

  it("shows no weights without an enabled zone placement policy, and takes an affinity policy's group from its spec", () => {
    const affinity = { enabled: true, policy_id: 'p-aff', policy_name: 'apart', policy_type: 'senlin.policy.affinity-1.0', data: { AffinityPolicy: { data: { servergroup_id: GROUP } } } };
    const plain = placementMap({
      nodes: [node('n1', 'az1', 'host-1')],
      bindings: [{ ...zonesBinding, enabled: false }, affinity],
      policies: new Map<string, object>([['p-zones', zonesPolicy], ['p-aff', { spec: { properties: { servergroup: { name: 'web-apart', policies: 'anti-affinity' } } } }]]),
      decision: null,
    });
    expect(plain.zones).toEqual([{ name: 'az1', count: 1, weight: null, share: null, expected: null }]);
    expect(plain.groups).toEqual([{ id: GROUP, name: 'web-apart', policy: 'anti-affinity', members: 1 }]);
  });
});

describe("a decision as a person reads it", () => {
  const decision = {
    input: {
      cluster: { desired_capacity: 2, nodes: [{ id: 'old-1', name: 'node-old', data: { placement: { zone: 'az2' } } }] },
      cloud: { server_groups: [{ id: GROUP, name: 'db-aa-1', policy: 'anti-affinity' }] },
      policies: [],
    },
    output: {
      status: 'OK',
      reason: 'Completed policy checking.',
      data: {
        creation: { count: 2, zones: { az1: 1, az2: 1 } },
        placement: { count: 2, placements: [{ zone: 'az1', servergroup: GROUP }, { zone: 'az2', servergroup: GROUP }] },
        deletion: { count: 1, candidates: ['old-1'] },
      },
    },
    plan: {
      cluster_update: { desired_capacity: 3 },
      create_nodes: [
        { node_id: 'new-1', name: 'node-a', placement: { zone: 'az1', servergroup: GROUP } },
        { node_id: 'new-2', name: 'node-b', placement: { zone: 'az2', servergroup: GROUP } },
      ],
      delete_nodes: [{ node_id: 'old-1' }],
      policy_plan: { error: null },
      success_reason: 'Cluster scaling succeeded.',
    },
    trace: [
      { policy_name: 'zones', policy_type: 'senlin.policy.zone_placement-1.0', ran: true, verdict: 'OK', reason: 'create 2: {"az1":1,"az2":1}', changed_keys: ['creation'] },
      { policy_name: 'db-apart', policy_type: 'trellis.policy.role_anti_affinity-1.0', ran: true, verdict: 'OK', reason: `servergroups ${GROUP}, ${GROUP} for 2 new node(s)`, changed_keys: ['placement'] },
      { policy_name: 'bye', policy_type: 'senlin.policy.deletion-1.1', ran: true, verdict: 'OK', reason: 'candidates chosen', changed_keys: ['deletion'] },
      { policy_name: 'later', policy_type: 'senlin.policy.scaling-1.0', ran: false, verdict: 'SKIPPED', skipped_reason: 'not for CLUSTER_SCALE_OUT', changed_keys: [] },
    ],
  };

  it('says what the plan does: new nodes where, nodes removed, the new size', () => {
    const d = readDecision(decision);
    expect(d).toMatchObject({ status: 'OK', reason: 'Completed policy checking.', error: null, desired: { from: 2, to: 3 } });
    expect(d.creates).toEqual([
      { name: 'node-a', zone: 'az1', group: 'db-aa-1' },
      { name: 'node-b', zone: 'az2', group: 'db-aa-1' },
    ]);
    expect(d.deletes).toEqual([{ name: 'node-old', zone: 'az2', group: '' }]);
  });

  it('says what each policy said and changed, with names for ids and counts for JSON', () => {
    expect(readDecision(decision).policies).toEqual([
      { name: 'zones', type: 'senlin.policy.zone_placement-1.0', verdict: 'OK', said: 'create 2: az1 1, az2 1', changes: [{ key: 'creation', text: '2 new node(s) by zone: az1 1, az2 1' }] },
      {
        name: 'db-apart',
        type: 'trellis.policy.role_anti_affinity-1.0',
        verdict: 'OK',
        said: 'servergroups db-aa-1, db-aa-1 for 2 new node(s)',
        changes: [{ key: 'placement', text: '2 placement(s): az1 in group db-aa-1 ×1, az2 in group db-aa-1 ×1' }],
      },
      { name: 'bye', type: 'senlin.policy.deletion-1.1', verdict: 'OK', said: 'candidates chosen', changes: [{ key: 'deletion', text: 'remove 1 node(s); chosen: node-old' }] },
      { name: 'later', type: 'senlin.policy.scaling-1.0', verdict: 'SKIPPED', said: 'skipped: not for CLUSTER_SCALE_OUT', changes: [] },
    ]);
  });

  it("reads a dry run's top-level outcome, a refused plan's error and a repair's replacements", () => {
    const d = readDecision({
      status: 'ERROR',
      reason: 'Policy check failure',
      input: {},
      output: { findings: [{ message: `group ${GROUP} is gone` }] },
      plan: {
        policy_plan: { error: 'Policy check failure: no zone' },
        repair: { replacements: [{ node_id: 'r', name: 'node-new', old_node_id: 'o', old_name: 'node-old', placement: { zone: 'az1' }, reasons: ['hosts_shared'] }] },
      },
      trace: [],
    });
    expect(d).toMatchObject({ status: 'ERROR', reason: 'Policy check failure', error: 'Policy check failure: no zone', findings: [`group ${GROUP} is gone`] });
    expect(d.replacements).toEqual([{ name: 'node-new', zone: 'az1', group: '', replaces: 'node-old', why: 'hosts_shared' }]);
  });

  it('leaves text without ids or counts as it is', () => {
    expect(readable('Cluster scaling succeeded.', new Map())).toBe('Cluster scaling succeeded.');
    expect(readable('node 00000000-0000-4000-8000-000000000000 {"a":"b"}', new Map())).toBe('node 00000000-0000-4000-8000-000000000000 {"a":"b"}');
  });
});

describe("an action's progress", () => {
  const decision = { plan: { create_nodes: [{ node_id: 'a' }, { node_id: 'b' }, { node_id: 'c' }], delete_nodes: [{ node_id: 'x' }, { node_id: 'y' }] } };

  it('counts the planned nodes ACTIVE and in ERROR, and the removed ones that are gone', () => {
    const p = actionProgress(decision, [{ id: 'a', status: 'ACTIVE' }, { id: 'b', status: 'ERROR' }, { id: 'c', status: 'CREATING' }, { id: 'y', status: 'DELETING' }]);
    expect(p).toEqual({ create: 3, active: 1, error: 1, delete: 2, deleted: 1, decided: true });
    expect(progressText(p)).toBe('1 of 3 new nodes ACTIVE, 1 ERROR; 1 of 2 nodes removed');
  });

  it('waits for the decision before it counts', () => {
    expect(progressText(actionProgress(null, []))).toBe('waiting for the policy engine to decide');
    expect(progressText(actionProgress({ plan: {} }, []))).toBe('no nodes to create or remove');
  });
});
