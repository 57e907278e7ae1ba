import { advanceClock, boot, bootAndShow, call, createGroup, harnessTopology, login } from './spec-helpers';
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
    // No retry for a forced host: the compute host's reason is the fault.
    expect(second.fault.message).toBe('Anti-affinity instance group policy was violated.');
    expect(second[HOST]).toBeNull();
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

describe('scheduling after the create (the harness topology, build delay 400 s, clock moved by hand)', () => {
  const BUILD_MS = 400_000;
  let sim: RunningSimulator;
  let admin: string;
  const show = async (id: string) => (await call(sim, 'GET', `/compute/v2.1/servers/${id}`, { token: admin, version: '2.71' })).body.server;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: BUILD_MS, topology: harnessTopology() });
    admin = await login(sim, 'admin');
  });
  afterAll(() => sim.close());
  beforeEach(() => call(sim, 'POST', '/_sim/reset'));

  it('answers a just-created server as BUILD/scheduling without host, hostId or (unless asked) zone', async () => {
    const unzoned = (await boot(sim, { token: admin, name: 'no-zone' })).body.server.id;
    const zoned = (await boot(sim, { token: admin, name: 'in-az2', zone: 'az2' })).body.server.id;
    const s = await show(unzoned);
    expect(s).toMatchObject({
      status: 'BUILD',
      'OS-EXT-STS:vm_state': 'building',
      'OS-EXT-STS:task_state': 'scheduling',
      [HOST]: null,
      'OS-EXT-SRV-ATTR:hypervisor_hostname': null,
      hostId: '',
      [ZONE]: '',
      host_status: '',
    });
    expect((await show(zoned))[ZONE]).toBe('az2');
    const listed = await call(sim, 'GET', `/compute/v2.1/servers/detail?availability_zone=az2`, { token: admin });
    expect(listed.body.servers.map((x: { id: string }) => x.id)).toEqual([zoned]);

    await advanceClock(sim, BUILD_MS / 4);
    const spawning = await show(unzoned);
    expect(spawning).toMatchObject({ status: 'BUILD', 'OS-EXT-STS:task_state': 'spawning', host_status: 'UP' });
    expect(spawning[HOST]).toMatch(/^fake-host-[1-4]$/);
    expect(spawning.hostId).toMatch(/^[0-9a-f]{56}$/);
    const zoneOf: Record<string, string> = { 'fake-host-1': 'az1', 'fake-host-2': 'az1', 'fake-host-3': 'az2', 'fake-host-4': 'az2' };
    expect(spawning[ZONE]).toBe(zoneOf[spawning[HOST]]);

    await advanceClock(sim, (BUILD_MS * 3) / 4);
    expect(await show(unzoned)).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': null, [HOST]: spawning[HOST] });
  });

  it('fails the extra one of three concurrent boots into a two-host anti-affinity zone with "Exceeded maximum number of retries"', async () => {
    const group = await createGroup(sim, admin, 'anti-affinity');
    const ids: string[] = (await Promise.all([1, 2, 3].map((n) => boot(sim, { token: admin, group, zone: 'az1', name: `anti-${n}` })))).map(
      (r) => r.body.server.id,
    );
    expect((await Promise.all(ids.map((id) => show(id)))).map((s) => s[HOST])).toEqual([null, null, null]);
    await advanceClock(sim, BUILD_MS);
    const shown = await Promise.all(ids.map((id) => show(id)));
    const active = shown.filter((s) => s.status === 'ACTIVE');
    expect(new Set(active.map((s) => s[HOST]))).toEqual(new Set(['fake-host-1', 'fake-host-2']));
    const failed = shown.filter((s) => s.status === 'ERROR');
    expect(failed).toHaveLength(1);
    expect(failed[0].fault).toMatchObject({
      code: 500,
      message: `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${failed[0].id}.`,
    });
    expect(failed[0]).toMatchObject({ [HOST]: null, hostId: '', [ZONE]: 'az1', server_groups: [group] });
    const members = (await call(sim, 'GET', `/compute/v2.1/os-server-groups/${group}`, { token: admin })).body.server_group.members;
    expect([...members].sort()).toEqual([...ids].sort());
  });

  it('gives NoValidHost to the third of boots made one after another', async () => {
    const group = await createGroup(sim, admin, 'anti-affinity');
    const shown = [];
    for (const n of [1, 2, 3]) {
      const id = (await boot(sim, { token: admin, group, zone: 'az1', name: `seq-${n}` })).body.server.id;
      await advanceClock(sim, BUILD_MS);
      shown.push(await show(id));
    }
    expect(shown.map((s) => s.status)).toEqual(['ACTIVE', 'ACTIVE', 'ERROR']);
    expect(shown[2].fault.message).toBe('No valid host was found. There are not enough hosts available.');
  });

  it('boots onto the DRS node of the harness with ZONE::NODE', async () => {
    const id = (await boot(sim, { token: admin, zone: 'az2::fake-drs-cluster-4' })).body.server.id;
    await advanceClock(sim, BUILD_MS);
    expect(await show(id)).toMatchObject({ status: 'ACTIVE', [HOST]: 'fake-host-4', 'OS-EXT-SRV-ATTR:hypervisor_hostname': 'fake-drs-cluster-4', [ZONE]: 'az2' });
  });

  it.each([{}, { advance_ms: -1 }, { advance_ms: 1.5 }, { advance_ms: '10' }, { advance_ms: 10, extra: 1 }])('refuses the clock control body %j', async (body) => {
    const r = await call(sim, 'POST', '/_sim/clock', { body });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("'advance_ms' must be a whole number");
  });
});
