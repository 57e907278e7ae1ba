import { checkInvariants, violationCount, type SimServer, type World } from './invariants';
import type { ActionRecord } from './load';

/** The fault suite's judge must be able to fail: each invariant against a world that breaks it. */
describe('the fault suite invariants', () => {
  const server = (id: string, node: string, over: Partial<SimServer> = {}): SimServer => ({
    id,
    name: `node-${node}`,
    status: 'ACTIVE',
    task_state: null,
    metadata: { trellis_node: node },
    ...over,
  });
  const record = (actionId: string, expectedSize: number, over: Partial<ActionRecord> = {}): ActionRecord => ({
    cluster: 'c1',
    phase: 'p',
    body: {},
    expectedSize,
    gateway: 0,
    key: actionId,
    actionId,
    ...over,
  });
  /** cluster c1 grown to 2 then 1 by two succeeded actions: nodes n1 (s1), one server each */
  const healthy = (): World => ({
    records: [record('a1', 2), record('a2', 1)],
    actions: [
      { id: 'a1', status: 'SUCCEEDED' },
      { id: 'a2', status: 'SUCCEEDED' },
    ],
    clusters: [{ id: 'c1', desired_capacity: 1 }],
    nodes: [{ id: 'n1', cluster_id: 'c1', physical_id: 's1', status: 'ACTIVE' }],
    // the node a2 removed: its server is being deleted, which is no orphan
    servers: [server('s1', 'n1'), server('s2', 'n2', { task_state: 'deleting' }), server('s3', 'n3', { status: 'DELETED' })],
  });

  it('finds nothing in a healthy world', () => {
    expect(violationCount(checkInvariants(healthy()))).toBe(0);
  });

  it('counts an accepted action that is missing, not terminal, or past its deadline as lost', () => {
    const w = healthy();
    w.records.push(record('a3', 1), record('a4', 1), record('a5', 1, { lost: true }));
    w.actions.push({ id: 'a4', status: 'RUNNING' }, { id: 'a5', status: 'SUCCEEDED' });
    expect(checkInvariants(w).lost.map((l) => l.action_id)).toEqual(['a3', 'a4', 'a5']);
  });

  it('finds two live servers of one node, and two nodes on one server', () => {
    const w = healthy();
    w.servers.push(server('s9', 'n1'));
    w.nodes.push({ id: 'n7', cluster_id: null, physical_id: 's1', status: 'ACTIVE' });
    expect(checkInvariants(w).duplicateServers).toEqual([
      { node: 'n1', servers: ['s1', 's9'] },
      { node: 'n1,n7', servers: ['s1'] },
    ]);
  });

  it('finds a live server no node owns, and an ACTIVE node whose server is gone', () => {
    const w = healthy();
    w.servers.push(server('s4', 'n4'));
    w.nodes[0].physical_id = 's3';
    const v = checkInvariants(w);
    expect(v.orphanServers.map((o) => o.server)).toEqual(['s1', 's4']);
    expect(v.nodesWithoutServer).toEqual([{ node: 'n1', physical_id: 's3', status: 'ACTIVE' }]);
  });

  it('finds nodes stuck in CREATING or DELETING', () => {
    const w = healthy();
    w.nodes.push({ id: 'n5', cluster_id: 'c1', physical_id: null, status: 'CREATING' }, { id: 'n6', cluster_id: 'c1', physical_id: null, status: 'DELETING' });
    expect(checkInvariants(w).stuckNodes.map((n) => n.status)).toEqual(['CREATING', 'DELETING']);
  });

  it('finds a cluster whose nodes or desired capacity differ from what the succeeded actions asked', () => {
    const w = healthy();
    w.clusters[0].desired_capacity = 2;
    expect(checkInvariants(w).countMismatches).toEqual([{ cluster: 'c1', expected: 1, nodes: 1, desired_capacity: 2, failed_actions: [] }]);
  });
});
