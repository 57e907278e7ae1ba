import { boot, call, createGroup, login, sample, shapeOf } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const GROUPS = '/compute/v2.1/os-server-groups';

describe('os-server-groups', () => {
  let sim: RunningSimulator;
  let demo: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    demo = await login(sim, 'demo');
  });
  afterAll(() => sim.close());
  beforeEach(() => call(sim, 'POST', '/_sim/reset'));

  it('shows policies + metadata below 2.64 and policy + rules + project/user from 2.64, as the captures', async () => {
    await createGroup(sim, demo, 'anti-affinity', { max_server_per_host: 1 });
    const v21 = (await call(sim, 'GET', GROUPS, { token: demo })).body.server_groups[0];
    expect(shapeOf(v21).sort()).toEqual(shapeOf(sample('os-server-groups.2.1.json').server_groups[0]).sort());
    expect(v21.policies).toEqual(['anti-affinity']);
    expect(v21.metadata).toEqual({});
    const v264 = (await call(sim, 'GET', GROUPS, { token: demo, version: '2.64' })).body.server_groups[0];
    expect(shapeOf(v264).sort()).toEqual(shapeOf(sample('os-server-groups.2.64.json').server_groups[2]).sort());
    expect(v264).toMatchObject({ policy: 'anti-affinity', rules: { max_server_per_host: 1 }, project_id: sim.state.projectId('demo') });
    const v213 = (await call(sim, 'GET', GROUPS, { token: demo, version: '2.13' })).body.server_groups[0];
    expect(Object.keys(v213).sort()).toEqual(['id', 'members', 'metadata', 'name', 'policies', 'project_id', 'user_id']);
  });

  it('creates with policies below 2.64 and policy from 2.64; soft policies need 2.15', async () => {
    const old = await call(sim, 'POST', GROUPS, { token: demo, body: { server_group: { name: 'a', policies: ['affinity'] } } });
    expect(old.status).toBe(200);
    expect(old.body.server_group.policies).toEqual(['affinity']);
    const soft21 = await call(sim, 'POST', GROUPS, { token: demo, body: { server_group: { name: 'a', policies: ['soft-affinity'] } } });
    expect(soft21.status).toBe(400);
    expect(soft21.body.badRequest.message).toContain("is not one of ['anti-affinity', 'affinity']");
    const soft215 = await call(sim, 'POST', GROUPS, { token: demo, version: '2.15', body: { server_group: { name: 'a', policies: ['soft-affinity'] } } });
    expect(soft215.status).toBe(200);
    const policyAt21 = await call(sim, 'POST', GROUPS, { token: demo, body: { server_group: { name: 'a', policy: 'affinity' } } });
    expect(policyAt21.status).toBe(400);
    const policiesAt264 = await call(sim, 'POST', GROUPS, { token: demo, version: '2.64', body: { server_group: { name: 'a', policies: ['affinity'] } } });
    expect(policiesAt264.status).toBe(400);
    expect(policiesAt264.body.badRequest.message).toContain("'policies' was unexpected");
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['rules with affinity', { name: 'a', policy: 'affinity', rules: { max_server_per_host: 2 } }, /^Only anti-affinity policy supports rules\.$/],
    ['an unknown rule', { name: 'a', policy: 'anti-affinity', rules: { max_servers: 2 } }, /'max_servers' was unexpected/],
    ['a zero max_server_per_host', { name: 'a', policy: 'anti-affinity', rules: { max_server_per_host: 0 } }, /not a positive integer/],
    ['an unknown policy', { name: 'a', policy: 'spread' }, /is not one of/],
    ['a missing name', { policy: 'affinity' }, /'name' is a required property/],
  ])('refuses %s at 2.64', async (_what, server_group, message) => {
    const r = await call(sim, 'POST', GROUPS, { token: demo, version: '2.64', body: { server_group } });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toMatch(message);
  });

  it('shows, lists and deletes', async () => {
    const id = await createGroup(sim, demo, 'soft-anti-affinity');
    const shown = await call(sim, 'GET', `${GROUPS}/${id}`, { token: demo, version: '2.64' });
    expect(shown.body.server_group).toMatchObject({ id, policy: 'soft-anti-affinity', rules: {}, members: [] });
    expect((await call(sim, 'DELETE', `${GROUPS}/${id}`, { token: demo })).status).toBe(204);
    const gone = await call(sim, 'GET', `${GROUPS}/${id}`, { token: demo });
    expect(gone.status).toBe(404);
    expect(gone.body.itemNotFound.message).toBe(`Instance group ${id} could not be found.`);
  });

  it("leaves its former members with server_groups [] once deleted (2.71), and still lists an ERROR member", async () => {
    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'only' }] }] };
    const small = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(small, 'demo');
      const id = await createGroup(small, t, 'anti-affinity');
      const servers = [];
      for (let i = 0; i < 2; i++) servers.push((await boot(small, { token: t, group: id })).body.server.id);
      const show = async (server: string) => (await call(small, 'GET', `/compute/v2.1/servers/${server}`, { token: t, version: '2.71' })).body.server;
      expect((await show(servers[1])).status).toBe('ERROR');
      expect((await call(small, 'GET', `${GROUPS}/${id}`, { token: t })).body.server_group.members).toEqual(servers);
      expect((await show(servers[0])).server_groups).toEqual([id]);
      expect((await call(small, 'DELETE', `${GROUPS}/${id}`, { token: t })).status).toBe(204);
      for (const server of servers) expect((await show(server)).server_groups).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('pages with limit and offset', async () => {
    for (let i = 0; i < 3; i++) await createGroup(sim, demo, 'affinity');
    expect((await call(sim, 'GET', `${GROUPS}?limit=2`, { token: demo })).body.server_groups).toHaveLength(2);
    expect((await call(sim, 'GET', `${GROUPS}?limit=2&offset=2`, { token: demo })).body.server_groups).toHaveLength(1);
  });
});
