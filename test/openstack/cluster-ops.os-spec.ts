import { ApiClient, keystoneToken } from '../support/api-client';
import { startTrellisOn, type TrellisOnCloud } from '../support/real-cloud-scenarios';
import { REAL_SCENARIO_CLOUD, assertRealCloudAnswers, realCloudSettings } from './support/real-cloud';

/**
 * POST /v1/clusters/{id}/ops against the real Keystone + Nova: Trellis embedded with the harness's
 * `trellis` service user acting with demo's trust; each server's reboots counted in Nova's own
 * record of them (`GET /servers/{id}/os-instance-actions`, as demo), their user demo's.
 */
const PREFIX = 'os-ops-';

const cloud = REAL_SCENARIO_CLOUD;

describe('cluster operations against the real Keystone + Nova', () => {
  let on: TrellisOnCloud;
  let demoToken: string;
  let demoUserId: string;

  beforeAll(async () => {
    await assertRealCloudAnswers();
    await cloud.cleanup(PREFIX);
    on = await startTrellisOn(cloud, 'trellis');
    const demo = realCloudSettings('demo');
    demoToken = await keystoneToken(demo.authUrl!, { name: demo.username!, password: demo.password!, project: demo.projectName! });
    const me = await fetch(`${demo.authUrl}/auth/tokens`, { headers: { 'X-Auth-Token': demoToken, 'X-Subject-Token': demoToken } });
    demoUserId = ((await me.json()) as { token: { user: { id: string } } }).token.user.id;
    const spec = { type: 'os.nova.server', version: 1.0, properties: { name: `${PREFIX}server`, flavor: cloud.flavor, image: cloud.image, networks: [] } };
    const res = await on.api.post('/v1/profiles', { profile: { name: `${PREFIX}profile`, spec } });
    if (res.status !== 201) throw new Error(`profile: ${res.status} ${JSON.stringify(res.body)}`);
  }, 300_000);

  afterAll(async () => {
    await on?.close();
    await cloud.cleanup(PREFIX);
  }, 300_000);

  async function finished(res: { status: number; headers: Headers; body: any }) {
    if (res.status !== 202) throw new Error(`expected 202, got ${res.status} ${JSON.stringify(res.body)}`);
    return on.api.waitForAction(ApiClient.actionIdOf(res), cloud.actionTimeoutMs);
  }

  /** Nova's record of the server's actions, newest first, as demo sees it */
  async function instanceActions(serverId: string): Promise<Array<{ action: string; user_id: string }>> {
    const nova = `http://${new URL(realCloudSettings('demo').authUrl!).hostname}:8774/v2.1`;
    const res = await fetch(`${nova}/servers/${serverId}/os-instance-actions`, { headers: { 'X-Auth-Token': demoToken } });
    if (res.status !== 200) throw new Error(`os-instance-actions of ${serverId}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { instanceActions: Array<{ action: string; user_id: string }> }).instanceActions;
  }

  it("reboots each member's server once, as demo, and only the members the filters pick", async () => {
    const created = await on.api.post('/v1/clusters', { cluster: { name: `${PREFIX}cluster`, profile_id: `${PREFIX}profile`, desired_capacity: 3, min_size: 0, max_size: -1 } });
    expect((await finished(created)).status).toBe('SUCCEEDED');
    const clusterId = created.body.cluster.id as string;
    const nodes = (await on.api.get(`/v1/nodes?cluster_id=${clusterId}&sort=index:asc`)).body.nodes as Array<{ id: string; name: string; physical_id: string }>;
    expect(nodes).toHaveLength(3);

    const started = Date.now();
    const all = await finished(await on.api.post(`/v1/clusters/${clusterId}/ops`, { reboot: { params: { type: 'SOFT' } } }));
    console.log(`CLUSTER_OPERATION reboot of 3 nodes on the real cloud: ${Date.now() - started} ms`);
    expect(all).toMatchObject({ action: 'CLUSTER_OPERATION', status: 'SUCCEEDED', status_reason: "Cluster operation 'reboot' completed." });
    const picked = await finished(await on.api.post(`/v1/clusters/${clusterId}/ops`, { reboot: { filters: { name: nodes[0].name } } }));
    expect(picked).toMatchObject({ status: 'SUCCEEDED', inputs: { nodes: [nodes[0].id] } });

    const reboots = [];
    for (const n of nodes) {
      const actions = await instanceActions(n.physical_id);
      const r = actions.filter((a) => a.action === 'reboot');
      // Trellis acts in Nova as demo (its trust), never as itself
      expect(r.every((a) => a.user_id === demoUserId)).toBe(true);
      reboots.push(r.length);
    }
    expect(reboots).toEqual([2, 1, 1]);
    for (const n of nodes) {
      expect((await on.api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });
    }
    expect((await on.api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({
      status: 'ACTIVE',
      status_reason: 'reboot: number of active nodes is equal or above desired_capacity (3).',
    });
  });
});
