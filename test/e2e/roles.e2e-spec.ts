import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

const FORBIDDEN = { code: 403, message: 'You are not authorized to complete this operation.', type: 'Forbidden' };

/**
 * Roles with real Keystone tokens (the simulator's): the simulator's `admin` user has the admin
 * role on `admin` and on `demo`. Scoped to `demo` it administers demo only; scoped to `admin`
 * (TRELLIS_ADMIN_PROJECT's default) it is the cloud admin.
 */
describe('roles with Keystone tokens (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let member: ApiClient;
  let demoAdmin: ApiClient;
  let cloudAdmin: ApiClient;
  let viewer: ApiClient;
  let clusterId: string;
  let actionId: string;

  beforeAll(async () => {
    t = await startTestTrellis({ env: { SIMULATOR_BUILD_DELAY_MS: '20' } });
    trellis = t.trellis;
    const authUrl = trellis.simulator!.authUrl;
    member = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' }));
    demoAdmin = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'admin', password: 'admin', project: 'demo' }));
    cloudAdmin = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'admin', password: 'admin', project: 'admin' }));
    // the simulator's read-only user: `reader` on demo, nothing else
    viewer = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'viewer', password: 'demo', project: 'demo' }));
    ({ clusterId } = await createProfileAndCluster(member, 'roles'));
    const actions = await member.get(`/v1/actions?cluster_id=${clusterId}`);
    actionId = actions.body.actions[0].id;
  });
  afterAll(() => t?.close());

  it("lets demo's reader read demo and change nothing", async () => {
    for (const path of ['/v1/clusters', `/v1/clusters/${clusterId}`, '/v1/profiles', `/v1/actions/${actionId}`, '/v1/events', '/v1/nodes', '/v1/policies']) {
      expect({ path, status: (await viewer.get(path)).status }).toEqual({ path, status: 200 });
    }
    const writes = [
      await viewer.post('/v1/profiles', { profile: { name: 'v', spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake' } } } }),
      await viewer.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }),
      await viewer.call('PATCH', `/v1/clusters/${clusterId}`, { cluster: { name: 'renamed' } }),
      await viewer.call('DELETE', `/v1/clusters/${clusterId}`),
    ];
    for (const res of writes) {
      expect(res.status).toBe(403);
      expect(res.body.error).toEqual(FORBIDDEN);
    }
    expect((await member.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({ name: 'roles', status: 'ACTIVE' });
  });

  it("refuses global_project and replay to demo's member and to demo's admin", async () => {
    for (const client of [member, demoAdmin]) {
      const list = await client.get('/v1/clusters?global_project=true');
      expect(list.status).toBe(403);
      expect(list.body.error).toEqual(FORBIDDEN);
      const replay = await client.post(`/v1/actions/${actionId}/replay`, {});
      expect(replay.status).toBe(403);
    }
    // demo's admin still administers demo
    expect((await demoAdmin.get(`/v1/clusters/${clusterId}`)).status).toBe(200);
  });

  it("lets the admin project's admin list every project and reach demo's actions for replay", async () => {
    const list = await cloudAdmin.get('/v1/clusters?global_project=true');
    expect(list.status).toBe(200);
    expect(list.body.clusters.map((c: { id: string }) => c.id)).toContain(clusterId);
    // the create action has finished: found across projects, and refused for its status only
    const replay = await cloudAdmin.post(`/v1/actions/${actionId}/replay`, {});
    expect(replay.status).toBe(409);
    // outside global_project, another project's objects stay not found
    expect((await cloudAdmin.get(`/v1/clusters/${clusterId}`)).status).toBe(404);
  });
});

describe('TRELLIS_POLICY_FILE in the embedded default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-roles-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('lets only project admins create profiles when the file says so', async () => {
    const t = await startTestTrellis({ env: { TRELLIS_POLICY_FILE: file('admins.yaml', '"profiles:create": "rule:project_admin"\n') } });
    try {
      const authUrl = t.trellis.simulator!.authUrl;
      const member = new ApiClient(t.trellis.url, await keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' }));
      const demoAdmin = new ApiClient(t.trellis.url, await keystoneToken(authUrl, { name: 'admin', password: 'admin', project: 'demo' }));
      const profile = (name: string) => ({ profile: { name, spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake' } } } });
      const refused = await member.post('/v1/profiles', profile('by-member'));
      expect(refused.status).toBe(403);
      expect(refused.body.error).toEqual(FORBIDDEN);
      expect((await demoAdmin.post('/v1/profiles', profile('by-admin'))).status).toBe(201);
    } finally {
      await t.close();
    }
  });

  it('refuses to start with an unknown rule, naming it', async () => {
    await expect(startTestTrellis({ env: { TRELLIS_POLICY_FILE: file('typo.yaml', '"profiles:creat": "@"\n') } })).rejects.toThrow(
      /unknown rule 'profiles:creat'/,
    );
  });
});
