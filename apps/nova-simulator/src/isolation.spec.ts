import { createHash } from 'node:crypto';
import { hostId } from './compute-views';
import { boot, call, createGroup, login, sample } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

describe('project isolation', () => {
  let sim: RunningSimulator;
  let admin: string;
  let demo: string;
  let alt: string;
  let demoServer: string;
  let demoGroup: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    [admin, demo, alt] = await Promise.all([login(sim, 'admin'), login(sim, 'demo'), login(sim, 'alt_demo')]);
    demoGroup = await createGroup(sim, demo, 'anti-affinity');
    demoServer = (await boot(sim, { token: demo, group: demoGroup })).body.server.id;
    await boot(sim, { token: alt });
  });
  afterAll(() => sim.close());

  it("hides another project's server: 404 on show and delete, absent from lists", async () => {
    const shown = await call(sim, 'GET', `/compute/v2.1/servers/${demoServer}`, { token: alt });
    expect(shown.status).toBe(404);
    expect(shown.body.itemNotFound.message).toBe(`Instance ${demoServer} could not be found.`);
    expect((await call(sim, 'DELETE', `/compute/v2.1/servers/${demoServer}`, { token: alt })).status).toBe(404);
    const list = await call(sim, 'GET', '/compute/v2.1/servers/detail', { token: alt });
    expect(list.body.servers.map((s: { id: string }) => s.id)).not.toContain(demoServer);
    expect(list.body.servers).toHaveLength(1);
  });

  it('lets only an admin list every project, with all_tenants (or all_projects)', async () => {
    expect((await call(sim, 'GET', '/compute/v2.1/servers?all_tenants=1', { token: demo })).status).toBe(403);
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token: admin })).body.servers).toHaveLength(0);
    expect((await call(sim, 'GET', '/compute/v2.1/servers?all_tenants=True', { token: admin })).body.servers).toHaveLength(2);
    expect((await call(sim, 'GET', '/compute/v2.1/servers?all_projects=true', { token: admin })).body.servers).toHaveLength(2);
    const onlyDemo = await call(sim, 'GET', `/compute/v2.1/servers?all_tenants=1&project_id=${sim.state.projectId('demo')}`, { token: admin });
    expect(onlyDemo.body.servers.map((s: { id: string }) => s.id)).toEqual([demoServer]);
    expect((await call(sim, 'GET', `/compute/v2.1/servers/${demoServer}`, { token: admin })).status).toBe(200);
  });

  it("keeps server groups per project; another project's group is not found, as in Zed", async () => {
    expect((await call(sim, 'GET', '/compute/v2.1/os-server-groups', { token: alt })).body.server_groups).toEqual([]);
    // A member asking for all projects quietly gets its own.
    expect((await call(sim, 'GET', '/compute/v2.1/os-server-groups?all_projects=True', { token: alt })).body.server_groups).toEqual([]);
    const theirs = await call(sim, 'GET', `/compute/v2.1/os-server-groups/${demoGroup}`, { token: alt });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ itemNotFound: { code: 404, message: `Instance group ${demoGroup} could not be found.` } });
    const deleted = await call(sim, 'DELETE', `/compute/v2.1/os-server-groups/${demoGroup}`, { token: alt });
    expect(deleted.status).toBe(404);
    expect(deleted.body.itemNotFound.message).toBe(`Instance group ${demoGroup} could not be found.`);
    expect((await call(sim, 'GET', `/compute/v2.1/os-server-groups/${demoGroup}`, { token: demo })).status).toBe(200);
    expect((await call(sim, 'GET', `/compute/v2.1/os-server-groups/${demoGroup}`, { token: admin })).status).toBe(200);
    expect((await call(sim, 'GET', '/compute/v2.1/os-server-groups', { token: admin })).body.server_groups).toEqual([]);
    const all = await call(sim, 'GET', '/compute/v2.1/os-server-groups?all_projects=True', { token: admin });
    expect(all.body.server_groups.map((g: { id: string }) => g.id)).toEqual([demoGroup]);
  });

  it('gives the same host different hostIds in different projects', async () => {
    const adminOnDemo = await login(sim, 'admin', 'demo');
    const a = await call(sim, 'POST', '/compute/v2.1/servers', {
      token: adminOnDemo,
      version: '2.64',
      body: { server: { name: 'p', imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25', flavorRef: '1', networks: 'none', availability_zone: 'az1:host-1' } },
    });
    const b = await call(sim, 'POST', '/compute/v2.1/servers', {
      token: admin,
      version: '2.64',
      body: { server: { name: 'q', imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25', flavorRef: '1', networks: 'none', availability_zone: 'az1:host-1' } },
    });
    const hostIdOf = async (id: string) => (await call(sim, 'GET', `/compute/v2.1/servers/${id}`, { token: admin })).body.server.hostId;
    expect(await hostIdOf(a.body.server.id)).not.toBe(await hostIdOf(b.body.server.id));
    // Nova's formula (nova.utils.generate_hostid): sha224 hex of project id + host name
    expect(await hostIdOf(a.body.server.id)).toBe(createHash('sha224').update(`${sim.state.projectId('demo')}host-1`).digest('hex'));
  });

  it("computes hostId as the reference cloud's Nova did for the captured server", () => {
    const captured = sample('server-show.2.64.json').server;
    expect(hostId(captured.tenant_id, captured['OS-EXT-SRV-ATTR:host'])).toBe(captured.hostId);
    expect(captured.hostId).toBe('6ee0de528a264e6083efc61321eb0f7e13105a3bcccbce57da54c312');
  });
});
