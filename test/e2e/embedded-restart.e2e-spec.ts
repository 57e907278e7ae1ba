import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIMULATOR_STATE_FILE } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { demoApi } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * `npm start`, Ctrl-C, `npm start` again on the same data directory (issue 19): Trellis's database
 * (PGlite) and the simulator's servers are both kept there, so after the restart the cluster's nodes
 * still point at servers that exist, and a node check finds them ACTIVE.
 */
describe('the embedded default restarted on its data directory', () => {
  let dataDir: string;
  let t: TestTrellis | null = null;
  const start = () => startTestTrellis({ env: { TRELLIS_DATA_DIR: dataDir } });

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-restart-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps the cluster's servers in the simulator, and a node check finds them ACTIVE", async () => {
    t = await start();
    let api = await demoApi(t.trellis);
    const { clusterId } = await createProfileAndCluster(api, 'kept', 2);
    const before = await nodesOf(api, clusterId);
    expect(before.map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE']);
    await t.close();
    t = null;
    expect(existsSync(join(dataDir, SIMULATOR_STATE_FILE))).toBe(true);

    t = await start();
    expect(t.trellis.simulator!.restoredServers).toBe(2);
    api = await demoApi(t.trellis);
    const after = await nodesOf(api, clusterId);
    const token = await keystoneToken(t.trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    expect(after.map((n) => n.physical_id).sort()).toEqual(before.map((n) => n.physical_id).sort());
    for (const node of after) {
      // asked of Nova (the simulator) itself, as the demo user
      const server = await fetch(`${t.trellis.simulator!.computeUrl}/servers/${node.physical_id}`, { headers: { 'X-Auth-Token': token } });
      expect(server.status).toBe(200);
      expect(((await server.json()) as { server: { status: string } }).server.status).toBe('ACTIVE');

      const check = await api.post(`/v1/nodes/${node.id}/actions`, { check: {} });
      expect(check.status).toBe(202);
      expect(await api.waitForAction(ApiClient.actionIdOf(check))).toMatchObject({ status: 'SUCCEEDED' });
      expect((await api.get(`/v1/nodes/${node.id}`)).body.node.status).toBe('ACTIVE');
    }
    expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster.status).toBe('ACTIVE');
  }, 120_000);
});
