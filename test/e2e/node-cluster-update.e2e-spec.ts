import { IMAGES } from '../../apps/nova-simulator/src/simulator';
import { ApiClient, keystoneToken } from '../support/api-client';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * NODE_UPDATE and CLUSTER_UPDATE with a new profile on the embedded default (issue 11): the
 * nova-worker rebuilds, resizes, renames and re-tags the servers in the simulator, and the nodes and
 * the cluster take the new profile as Senlin's tempest suite expects.
 */
describe('node and cluster update to a new profile (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  let token: string;
  const [image, altImage] = IMAGES;

  const spec = (properties: Record<string, unknown>) => ({
    type: 'os.nova.server',
    version: 1.0,
    properties: { flavor: 'm1.tiny', image: image.name, networks: [], ...properties },
  });

  beforeAll(async () => {
    t = await startTestTrellis();
    token = await keystoneToken(t.trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(t.trellis.url, token);
    const profiles: Array<[string, Record<string, unknown>]> = [
      ['old', {}],
      ['new', { image: altImage.name, flavor: 'm1.small', name: 'updated-server', metadata: { tier: 'web' } }],
      ['bigger', { flavor: 'm1.small' }],
    ];
    for (const [name, properties] of profiles) {
      expect((await api.post('/v1/profiles', { profile: { name, spec: spec(properties) } })).status).toBe(201);
    }
  });
  afterAll(() => t?.close());

  const sim = () => t.trellis.simulator!.state;
  const server = (id: string) => sim().server(id)!;
  const profileId = async (name: string) => (await api.get(`/v1/profiles/${name}`)).body.profile.id as string;

  async function finished(res: { status: number; headers: Headers; body: any }) {
    expect(res.status).toBe(202);
    return api.waitForAction(ApiClient.actionIdOf(res), 30_000);
  }

  async function node(name: string) {
    const res = await api.post('/v1/nodes', { node: { name, profile_id: 'old' } });
    expect((await finished(res)).status).toBe('SUCCEEDED');
    return (await api.get(`/v1/nodes/${res.body.node.id}`)).body.node;
  }

  async function cluster(name: string, size: number) {
    const res = await api.post('/v1/clusters', { cluster: { name, profile_id: 'old', desired_capacity: size, min_size: 0, max_size: -1 } });
    expect((await finished(res)).status).toBe('SUCCEEDED');
    const nodes = (await api.get(`/v1/nodes?cluster_id=${res.body.cluster.id}`)).body.nodes;
    expect(nodes).toHaveLength(size);
    return { id: res.body.cluster.id as string, nodes: nodes as Array<Record<string, any>> };
  }

  it('updates a node\'s name, role, metadata and tainted in the database only: its server is left alone', async () => {
    const n = await node('plain');
    const done = await finished(await api.call('PATCH', `/v1/nodes/${n.id}`, { node: { name: 'plain-2', role: 'db', metadata: { k: 'v' }, tainted: true } }));
    expect(done).toMatchObject({ action: 'NODE_UPDATE', status: 'SUCCEEDED', status_reason: 'Node updated successfully.' });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({
      name: 'plain-2', role: 'db', metadata: { k: 'v' }, tainted: true, status: 'ACTIVE', status_reason: 'Update succeeded', profile_name: 'old',
    });
    expect(server(n.physical_id)).toMatchObject({ name: 'plain', imageRef: image.id });
    expect(server(n.physical_id).flavor.name).toBe('m1.tiny');
  });

  it('updates a node to a new profile: Nova rebuilds the server from the new image, resizes it to the new flavor, renames and tags it', async () => {
    const n = await node('moved');
    const done = await finished(await api.call('PATCH', `/v1/nodes/${n.id}`, { node: { profile_id: 'new', role: 'web' } }));
    expect(done).toMatchObject({ action: 'NODE_UPDATE', status: 'SUCCEEDED', status_reason: 'Node updated successfully.' });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({
      profile_id: await profileId('new'), role: 'web', status: 'ACTIVE', status_reason: 'Update succeeded', physical_id: n.physical_id,
    });
    const s = server(n.physical_id);
    expect({ name: s.name, image: s.imageRef, flavor: s.flavor.name, status: sim().status(s) }).toEqual({
      name: 'updated-server', image: altImage.id, flavor: 'm1.small', status: 'ACTIVE',
    });
    // the profile's metadata, and Trellis's own tags that find the server again
    expect(s.metadata).toMatchObject({ tier: 'web', trellis_node: n.id });
  });

  it('fails a node update whose server is gone with Senlin\'s texts; the node is ERROR and keeps its profile', async () => {
    const n = await node('lost');
    sim().deleteServer(server(n.physical_id));
    sim().advanceClock(60_000);
    const done = await finished(await api.call('PATCH', `/v1/nodes/${n.id}`, { node: { profile_id: 'bigger', name: 'lost-2' } }));
    const reason = `Failed in updating server '${n.physical_id}': Instance ${n.physical_id} could not be found.`;
    expect(done).toMatchObject({ status: 'FAILED', status_reason: `Node update failed: ${reason}` });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({
      name: 'lost', profile_id: await profileId('old'), status: 'ERROR', status_reason: reason,
    });
  });

  it('changes only the cluster\'s profile with profile_only (1.6+): the nodes and their servers keep theirs', async () => {
    const c = await cluster('only', 2);
    const done = await finished(await api.call('PATCH', `/v1/clusters/${c.id}`, { cluster: { profile_id: 'bigger', profile_only: true } }));
    expect(done).toMatchObject({ action: 'CLUSTER_UPDATE', status: 'SUCCEEDED', status_reason: 'Cluster update completed.' });
    expect((await api.get(`/v1/clusters/${c.id}`)).body.cluster).toMatchObject({ profile_id: await profileId('bigger'), status: 'ACTIVE' });
    const nodes = (await api.get(`/v1/nodes?cluster_id=${c.id}`)).body.nodes;
    expect(nodes.map((n: any) => n.profile_id)).toEqual([await profileId('old'), await profileId('old')]);
    expect(nodes.map((n: any) => server(n.physical_id).flavor.name)).toEqual(['m1.tiny', 'm1.tiny']);
  });

  it('updates every node of a cluster to the new profile, then the cluster: the servers run the new flavor', async () => {
    const c = await cluster('all', 2);
    const done = await finished(await api.call('PATCH', `/v1/clusters/${c.id}`, { cluster: { profile_id: 'bigger', name: 'all-2' } }));
    expect(done).toMatchObject({ action: 'CLUSTER_UPDATE', status: 'SUCCEEDED', status_reason: 'Cluster update completed.' });
    expect((await api.get(`/v1/clusters/${c.id}`)).body.cluster).toMatchObject({ name: 'all-2', profile_id: await profileId('bigger'), status: 'ACTIVE' });
    const nodes = (await api.get(`/v1/nodes?cluster_id=${c.id}`)).body.nodes;
    expect(nodes.map((n: any) => [n.profile_id, n.status, n.status_reason])).toEqual(
      Array(2).fill([await profileId('bigger'), 'ACTIVE', 'Update succeeded']),
    );
    expect(nodes.map((n: any) => [server(n.physical_id).flavor.name, sim().status(server(n.physical_id))])).toEqual(Array(2).fill(['m1.small', 'ACTIVE']));
  });

  it('a cluster update that fails on one node: the others take the new profile, the cluster keeps its own (Senlin\'s "Failed in updating nodes.")', async () => {
    const c = await cluster('partial', 2);
    const [lost, kept] = c.nodes;
    sim().deleteServer(server(lost.physical_id));
    sim().advanceClock(60_000);
    const done = await finished(await api.call('PATCH', `/v1/clusters/${c.id}`, { cluster: { profile_id: 'bigger', timeout: 1800 } }));
    const reason = `Failed in updating server '${lost.physical_id}': Instance ${lost.physical_id} could not be found.`;
    expect(done).toMatchObject({ status: 'FAILED', status_reason: `Failed in updating nodes: ${reason}` });
    // name, timeout, metadata and config are stored before the nodes are updated, as in Senlin
    expect((await api.get(`/v1/clusters/${c.id}`)).body.cluster).toMatchObject({ profile_id: await profileId('old'), timeout: 1800, status: 'WARNING' });
    expect((await api.get(`/v1/nodes/${lost.id}`)).body.node).toMatchObject({ profile_id: await profileId('old'), status: 'ERROR', status_reason: reason });
    expect((await api.get(`/v1/nodes/${kept.id}`)).body.node).toMatchObject({ profile_id: await profileId('bigger'), status: 'ACTIVE', status_reason: 'Update succeeded' });
    expect(server(kept.physical_id).flavor.name).toBe('m1.small');
  });

  it('drops profile_only below 1.6, as Senlin does: at 1.5 the nodes are updated too', async () => {
    const c = await cluster('backward', 1);
    const old = new ApiClient(t.trellis.url, token, '1.5');
    const done = await finished(await old.call('PATCH', `/v1/clusters/${c.id}`, { cluster: { profile_id: 'bigger', profile_only: true } }));
    expect(done.status).toBe('SUCCEEDED');
    const [n] = (await api.get(`/v1/nodes?cluster_id=${c.id}`)).body.nodes;
    expect(n.profile_id).toBe(await profileId('bigger'));
    expect(server(n.physical_id).flavor.name).toBe('m1.small');
  });
});
