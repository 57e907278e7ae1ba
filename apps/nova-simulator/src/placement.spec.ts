import { boot, bootAndShow, call, createGroup, login } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const HOST = 'OS-EXT-SRV-ATTR:host';
const ZONE = 'OS-EXT-AZ:availability_zone';

describe('scheduling through the API', () => {
  let sim: RunningSimulator;
  let admin: string;
  let demo: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    admin = await login(sim, 'admin');
    demo = await login(sim, 'demo');
  });
  afterAll(() => sim.close());
  beforeEach(() => call(sim, 'POST', '/_sim/reset'));

  it('puts concurrent anti-affinity members on distinct hosts, then NoValidHost when hosts run out', async () => {
    const group = await createGroup(sim, admin, 'anti-affinity');
    const replies = await Promise.all(Array.from({ length: 7 }, (_, i) => boot(sim, { token: admin, group, name: `anti-${i}` })));
    expect(replies.every((r) => r.status === 202)).toBe(true);
    const shown = await Promise.all(
      replies.map(async (r) => (await call(sim, 'GET', `/compute/v2.1/servers/${r.body.server.id}`, { token: admin, version: '2.64' })).body.server),
    );
    const active = shown.filter((s) => s.status === 'ACTIVE');
    expect(active).toHaveLength(6);
    expect(new Set(active.map((s) => s[HOST])).size).toBe(6);
    const failed = shown.filter((s) => s.status === 'ERROR');
    expect(failed).toHaveLength(1);
    expect(failed[0].fault).toMatchObject({ code: 500, message: 'No valid host was found. There are not enough hosts available.' });
    expect(typeof failed[0].fault.details).toBe('string');
    expect(failed[0].fault.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(failed[0][HOST]).toBeNull();
    expect(failed[0].hostId).toBe('');
    expect(failed[0][ZONE]).toBe('');
    expect(failed[0]['OS-EXT-STS:vm_state']).toBe('error');
    expect(failed[0].progress).toBeUndefined();
  });

  it('keeps affinity members on one host', async () => {
    const group = await createGroup(sim, admin, 'affinity');
    const a = await bootAndShow(sim, { token: admin, group }, admin);
    const b = await bootAndShow(sim, { token: admin, group }, admin);
    expect(a.status).toBe('ACTIVE');
    expect(b[HOST]).toBe(a[HOST]);
  });

  it('pins to a zone, and refuses an unknown zone', async () => {
    for (let i = 0; i < 4; i++) {
      const s = await bootAndShow(sim, { token: demo, zone: 'az2' }, admin);
      expect(s[ZONE]).toBe('az2');
      expect(['host-4', 'host-5', 'host-6']).toContain(s[HOST]);
    }
    const r = await boot(sim, { token: demo, zone: 'az9' });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toBe('The requested availability zone is not available');
  });

  it('lets an admin force ZONE:HOST and ZONE:HOST:NODE; a member gets 403', async () => {
    const s = await bootAndShow(sim, { token: admin, zone: 'az2:host-6' }, admin);
    expect(s[HOST]).toBe('host-6');
    expect(s['OS-EXT-SRV-ATTR:hypervisor_hostname']).toBe('vsphere-drs-cluster-6');
    const n = await bootAndShow(sim, { token: admin, zone: 'az2:host-6:vsphere-drs-cluster-6' }, admin);
    expect(n[HOST]).toBe('host-6');
    const member = await boot(sim, { token: demo, zone: 'az2:host-6' });
    expect(member.status).toBe(403);
    expect(member.body.forbidden.message).toBe("Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.");
  });

  it('fails a forced host that breaks a hard group policy (the compute late check)', async () => {
    const group = await createGroup(sim, admin, 'anti-affinity');
    const first = await bootAndShow(sim, { token: admin, group, zone: 'az1:host-1' }, admin);
    expect(first.status).toBe('ACTIVE');
    const second = await bootAndShow(sim, { token: admin, group, zone: 'az1:host-1' }, admin);
    expect(second.status).toBe('ERROR');
    expect(second.fault.message).toMatch(/^Exceeded maximum number of retries/);
  });

  it('honours max_server_per_host', async () => {
    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'a' }, { name: 'b' }] }] };
    const small = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(small, 'admin');
      const group = await createGroup(small, t, 'anti-affinity', { max_server_per_host: 2 });
      const shown = [];
      for (let i = 0; i < 5; i++) shown.push(await bootAndShow(small, { token: t, group }, t));
      expect(shown.slice(0, 4).map((s) => s.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE']);
      const hosts = shown.slice(0, 4).map((s) => s[HOST]);
      expect(hosts.filter((h) => h === 'a')).toHaveLength(2);
      expect(hosts.filter((h) => h === 'b')).toHaveLength(2);
      expect(shown[4].status).toBe('ERROR');
    } finally {
      await small.close();
    }
  });

  it('never fails soft policies: soft-anti-affinity spreads then stacks, soft-affinity stacks', async () => {
    const anti = await createGroup(sim, admin, 'soft-anti-affinity');
    const spread = [];
    for (let i = 0; i < 8; i++) spread.push(await bootAndShow(sim, { token: admin, group: anti }, admin));
    expect(spread.every((s) => s.status === 'ACTIVE')).toBe(true);
    expect(new Set(spread.slice(0, 6).map((s) => s[HOST])).size).toBe(6);

    const aff = await createGroup(sim, admin, 'soft-affinity');
    const stacked = [];
    for (let i = 0; i < 3; i++) stacked.push(await bootAndShow(sim, { token: admin, group: aff }, admin));
    expect(stacked.every((s) => s.status === 'ACTIVE')).toBe(true);
    expect(new Set(stacked.map((s) => s[HOST])).size).toBe(1);
  });

  it('fails a build when host capacity runs out', async () => {
    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'tiny', capacity: { instances: 1 } }] }] };
    const small = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(small, 'demo');
      const a = await login(small, 'admin');
      expect((await bootAndShow(small, { token: t }, a)).status).toBe('ACTIVE');
      expect((await bootAndShow(small, { token: t }, a)).status).toBe('ERROR');
    } finally {
      await small.close();
    }
  });

  it('frees the host of a deleted member for the next one', async () => {
    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'a' }] }] };
    const small = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(small, 'admin');
      const group = await createGroup(small, t, 'anti-affinity');
      const first = await bootAndShow(small, { token: t, group }, t);
      expect((await call(small, 'DELETE', `/compute/v2.1/servers/${first.id}`, { token: t })).status).toBe(204);
      expect((await bootAndShow(small, { token: t, group }, t)).status).toBe('ACTIVE');
    } finally {
      await small.close();
    }
  });

  it('moves a server with /_sim/servers/{id}/migrate without checking the group', async () => {
    const group = await createGroup(sim, admin, 'anti-affinity');
    const a = await bootAndShow(sim, { token: admin, group }, admin);
    const b = await bootAndShow(sim, { token: admin, group }, admin);
    const moved = await call(sim, 'POST', `/_sim/servers/${b.id}/migrate`, { body: { host: a[HOST] } });
    expect(moved.status).toBe(200);
    const after = await call(sim, 'GET', `/compute/v2.1/servers/${b.id}`, { token: admin, version: '2.64' });
    expect(after.body.server[HOST]).toBe(a[HOST]);
    const state = await call(sim, 'GET', '/_sim/state');
    expect(state.body.servers.find((s: { id: string }) => s.id === b.id)).toMatchObject({ host: a[HOST], group });
    expect((await call(sim, 'POST', `/_sim/servers/${b.id}/migrate`, { body: { host: 'nowhere' } })).status).toBe(400);
  });
});
