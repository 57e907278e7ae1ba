import type { Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { createProfileAndCluster, nodesOf, scaleOut } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

describe('scale-out through the whole pipeline (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    trellis = t.trellis;
    const token = await keystoneToken(trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(trellis.url, token);
  });
  afterAll(() => t?.close());

  it('answers 202 with a Location, ends SUCCEEDED with 2 ACTIVE servers recorded on their nodes', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'web');
    const action = await scaleOut(api, 'web', 2);
    expect(action).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster scaling succeeded.', action: 'CLUSTER_SCALE_OUT' });
    expect(action.outputs.nodes_added).toHaveLength(2);

    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(2);
    for (const n of nodes) {
      expect(n.status).toBe('ACTIVE');
      expect(n.physical_id).toEqual(expect.any(String));
      expect(n.data.placement.zone).toMatch(/^az[12]$/);
      expect(n.data.placement.host).toEqual(expect.any(String));
    }
    const { servers: all } = trellis.simulator!.state.snapshot() as { servers: Array<{ id: string; status: string }> };
    const servers = all.filter((s) => s.status === 'ACTIVE');
    expect(servers.map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());

    const cluster = await api.get(`/v1/clusters/${clusterId}`);
    expect(cluster.body.cluster).toMatchObject({ status: 'ACTIVE', desired_capacity: 2 });
    expect(cluster.body.cluster.nodes.sort()).toEqual(nodes.map((n) => n.id).sort());
  });
});

describe('a build Nova cannot place (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis({ topology: { zones: [{ name: 'az1', hosts: [{ name: 'only-host', capacity: { instances: 1 } }] }] } });
    trellis = t.trellis;
    const token = await keystoneToken(trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(trellis.url, token);
  });
  afterAll(() => t?.close());

  it('ends FAILED with Nova\'s NoValidHost fault as the reason', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'db');
    const action = await scaleOut(api, 'db', 2);
    expect(action.status).toBe('FAILED');
    expect(action.status_reason).toContain('No valid host was found. There are not enough hosts available.');
    const nodes = await nodesOf(api, clusterId);
    expect(nodes.map((n) => n.status).sort()).toEqual(['ACTIVE', 'ERROR']);
    expect(nodes.find((n) => n.status === 'ERROR')!.status_reason).toContain('No valid host was found');
  });
});
