import { ApiClient } from '../support/api-client';
import { createProfile } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Standalone nodes and the cluster actions that change membership or recover members, on the
 * embedded default: every action ends in a final state, no message cycles.
 */
describe('standalone nodes, add/replace nodes and recover (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
    await createProfile(api, 'p1');
  });
  afterAll(() => t?.close());

  async function accepted(res: { status: number; headers: Headers; body: any }) {
    expect(res.status).toBe(202);
    return api.waitForAction(ApiClient.actionIdOf(res), 30_000);
  }

  async function standaloneNode(name: string): Promise<string> {
    const res = await api.post('/v1/nodes', { node: { name, profile_id: 'p1' } });
    const action = await accepted(res);
    expect(action).toMatchObject({ action: 'NODE_CREATE', status: 'SUCCEEDED' });
    return res.body.node.id as string;
  }

  async function cluster(name: string, desired: number): Promise<string> {
    const res = await api.post('/v1/clusters', { cluster: { name, profile_id: 'p1', desired_capacity: desired, min_size: 0, max_size: -1 } });
    expect((await accepted(res)).status).toBe('SUCCEEDED');
    return res.body.cluster.id as string;
  }

  it('creates and deletes a standalone node, its server with it', async () => {
    const id = await standaloneNode('lonely');
    const node = (await api.get(`/v1/nodes/${id}`)).body.node;
    expect(node).toMatchObject({ status: 'ACTIVE', cluster_id: '', index: -1 });
    expect(node.physical_id).toEqual(expect.any(String));
    const sim = t.trellis.simulator!.state;
    expect(sim.server(node.physical_id)).toBeTruthy();

    const deleted = await accepted(await api.call('DELETE', `/v1/nodes/${id}`));
    expect(deleted).toMatchObject({ action: 'NODE_DELETE', status: 'SUCCEEDED' });
    expect((await api.get(`/v1/nodes/${id}`)).status).toBe(404);
  });

  it('adds an orphan node to a cluster, replaces a member with another orphan', async () => {
    const clusterId = await cluster('members', 1);
    const [member] = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.nodes as string[];
    const joiner = await standaloneNode('joiner');
    const added = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { add_nodes: { nodes: [joiner] } }));
    expect(added).toMatchObject({ action: 'CLUSTER_ADD_NODES', status: 'SUCCEEDED', status_reason: 'Completed adding nodes.' });
    let c = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster;
    expect(c.desired_capacity).toBe(2);
    expect(c.nodes).toEqual(expect.arrayContaining([member, joiner]));

    const spare = await standaloneNode('spare');
    const replaced = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { replace_nodes: { nodes: { [member]: spare } } }));
    expect(replaced).toMatchObject({ action: 'CLUSTER_REPLACE_NODES', status: 'SUCCEEDED', status_reason: 'Completed replacing nodes.' });
    c = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster;
    expect(c.nodes.sort()).toEqual([joiner, spare].sort());
    expect((await api.get(`/v1/nodes/${member}`)).body.node).toMatchObject({ cluster_id: '', index: -1, status: 'ACTIVE' });
  });

  it('del_nodes lets the nodes leave with their servers, as Senlin; destroy_after_deletion true deletes them', async () => {
    const clusterId = await cluster('leavers', 2);
    const [kept, destroyed] = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.nodes as string[];
    const keptServer = (await api.get(`/v1/nodes/${kept}`)).body.node.physical_id as string;
    const destroyedServer = (await api.get(`/v1/nodes/${destroyed}`)).body.node.physical_id as string;
    const left = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { del_nodes: { nodes: [kept] } }));
    expect(left).toMatchObject({ action: 'CLUSTER_DEL_NODES', status: 'SUCCEEDED' });
    expect((await api.get(`/v1/nodes/${kept}`)).body.node).toMatchObject({ cluster_id: '', index: -1, status: 'ACTIVE', physical_id: keptServer });
    const sim = t.trellis.simulator!.state;
    expect(sim.server(keptServer)).toBeTruthy();

    const gone = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { del_nodes: { nodes: [destroyed], destroy_after_deletion: true } }));
    expect(gone).toMatchObject({ action: 'CLUSTER_DEL_NODES', status: 'SUCCEEDED' });
    expect((await api.get(`/v1/nodes/${destroyed}`)).status).toBe(404);
    expect(sim.server(destroyedServer)).toBeFalsy();
    expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({ desired_capacity: 0, nodes: [] });
  });

  it('answers Senlin\'s errors for replace_nodes and add_nodes', async () => {
    const clusterId = await cluster('negatives', 0);
    const orphan = await standaloneNode('orphan-a');
    const other = await standaloneNode('orphan-b');
    let res = await api.post(`/v1/clusters/${clusterId}/actions`, { replace_nodes: { nodes: { [orphan]: other } } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`The specified nodes ['${orphan}'] to be replaced are not members of the cluster ${clusterId}.`);
    res = await api.post(`/v1/clusters/${clusterId}/actions`, { replace_nodes: { nodes: { a: 'x', b: 'x' } } });
    expect(res.body.error.message).toBe('Map contains duplicated values');
    res = await api.post(`/v1/clusters/${clusterId}/actions`, { replace_nodes: { nodes: { a: null } } });
    expect(res.body.error.message).toBe("Field `nodes[a]' cannot be None");
    res = await api.post(`/v1/clusters/${clusterId}/actions`, { replace_nodes: { nodes: { 'no-such-node': other } } });
    expect(res.body.error.message).toBe("Original nodes not found: ['no-such-node'].");
    res = await api.post(`/v1/clusters/${clusterId}/actions`, { add_nodes: { nodes: ['no-such-node'] } });
    expect(res).toMatchObject({ status: 400, body: { error: { message: "Nodes not found: ['no-such-node']." } } });
  });

  it('recovers a cluster: nothing to do when all are ACTIVE, a member in ERROR is replaced', async () => {
    const clusterId = await cluster('recover', 2);
    const ok = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { recover: { operation: 'rebuild' } }));
    expect(ok).toMatchObject({ action: 'CLUSTER_RECOVER', status: 'SUCCEEDED', status_reason: 'Cluster recovery succeeded.' });

    const [broken, healthy] = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.nodes as string[];
    await t.trellis.infra.database.dataSource.query(`UPDATE nodes SET status = 'ERROR', status_reason = 'broken by the test' WHERE id = $1`, [broken]);
    const fixed = await accepted(await api.post(`/v1/clusters/${clusterId}/actions`, { recover: {} }));
    expect(fixed).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster recovery succeeded: 1 node(s) replaced.' });
    const c = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster;
    expect(c.nodes).toHaveLength(2);
    expect(c.nodes).toContain(healthy);
    expect(c.nodes).not.toContain(broken);
    expect(c.status).toBe('ACTIVE');

    const bad = await api.post(`/v1/clusters/${clusterId}/actions`, { recover: { operation: 'dance' } });
    expect(bad).toMatchObject({ status: 400, body: { error: { message: "Operation value 'dance' has to be one of the following: REBOOT, REBUILD, RECREATE." } } });
  });
});
