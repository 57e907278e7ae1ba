import { advanceClock, boot, bootAndShow, call, createGroup, IMAGE_REF, login, sample, shapeOf } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const SERVERS = '/compute/v2.1/servers';

describe('servers', () => {
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

  it('answers a create with 202 and the sample shape', async () => {
    const r = await boot(sim, { token: demo, name: 'web-1' });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body.server).sort()).toEqual(['OS-DCF:diskConfig', 'adminPass', 'id', 'links', 'security_groups']);
    const id = r.body.server.id;
    expect(r.body.server.links).toEqual([
      { rel: 'self', href: `${sim.computeUrl}/servers/${id}` },
      { rel: 'bookmark', href: `${sim.url}/compute/servers/${id}` },
    ]);
    expect(r.headers.get('location')).toBe(`${sim.computeUrl}/servers/${id}`);
  });

  it('shows an admin the same fields as the real 2.64 server-show capture', async () => {
    const s = await bootAndShow(sim, { token: admin, name: 'smoke-raw-1', zone: 'az1' }, admin);
    expect(shapeOf(s).sort()).toEqual(shapeOf(sample('server-show.2.64.json').server).sort());
    expect(s).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:vm_state': 'active', 'OS-EXT-STS:power_state': 1, host_status: 'UP' });
    expect(s.hostId).toMatch(/^[0-9a-f]{56}$/);
    expect(s['OS-EXT-SRV-ATTR:instance_name']).toMatch(/^instance-[0-9a-f]{8}$/);
  });

  it('shows an ERROR server like the real NoValidHost capture', async () => {
    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'only' }] }] };
    const small = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(small, 'admin');
      const group = await createGroup(small, t, 'anti-affinity');
      await bootAndShow(small, { token: t, group }, t);
      const failed = await bootAndShow(small, { token: t, group, name: 'smoke-anti-5' }, t);
      expect(shapeOf(failed).sort()).toEqual(shapeOf(sample('server-show-error-novalidhost.2.64.json').server).sort());
    } finally {
      await small.close();
    }
  });

  it('hides host attributes and fault details from a member, but shows hostId', async () => {
    const r = await boot(sim, { token: demo });
    const s = (await call(sim, 'GET', `${SERVERS}/${r.body.server.id}`, { token: demo, version: '2.64' })).body.server;
    expect(s.hostId).toMatch(/^[0-9a-f]{56}$/);
    expect(Object.keys(s).filter((k) => k.startsWith('OS-EXT-SRV-ATTR:'))).toEqual([]);
    expect(s.host_status).toBeUndefined();
    expect(s['OS-EXT-AZ:availability_zone']).toMatch(/^az[12]$/);

    const topology = { zones: [{ name: 'az1', hosts: [{ name: 'only', capacity: { instances: 0 } }] }] };
    const full = await startNovaSimulator({ buildDelayMs: 0, topology });
    try {
      const t = await login(full, 'demo');
      const failed = await boot(full, { token: t });
      const shown = (await call(full, 'GET', `${SERVERS}/${failed.body.server.id}`, { token: t, version: '2.64' })).body.server;
      expect(shown.status).toBe('ERROR');
      expect(Object.keys(shown.fault).sort()).toEqual(['code', 'created', 'message']);
    } finally {
      await full.close();
    }
  });

  it('varies the server view by microversion', async () => {
    const group = await createGroup(sim, demo, 'anti-affinity');
    const r = await boot(sim, { token: demo, group });
    const id = r.body.server.id;
    const at = async (version: string) => (await call(sim, 'GET', `${SERVERS}/${id}`, { token: demo, version })).body.server;
    const v21 = await at('2.1');
    expect(v21.flavor).toEqual({ id: '1', links: [{ rel: 'bookmark', href: `${sim.url}/compute/flavors/1` }] });
    expect(v21.locked).toBeUndefined();
    expect(v21.server_groups).toBeUndefined();
    expect((await at('2.64')).flavor).toMatchObject({ original_name: 'm1.tiny', vcpus: 1, ram: 512 });
    expect((await at('2.64')).server_groups).toBeUndefined();
    expect((await at('2.71')).server_groups).toEqual([group]);
  });

  it('goes BUILD first when there is a build delay, without a host until the scheduler has run', async () => {
    await call(sim, 'POST', '/_sim/config', { body: { build_delay_ms: 600_000 } });
    const r = await boot(sim, { token: admin });
    const s = (await call(sim, 'GET', `${SERVERS}/${r.body.server.id}`, { token: admin, version: '2.64' })).body.server;
    expect(s).toMatchObject({
      status: 'BUILD',
      'OS-EXT-STS:vm_state': 'building',
      'OS-EXT-STS:task_state': 'scheduling',
      'OS-EXT-SRV-ATTR:root_device_name': null,
      'OS-EXT-SRV-ATTR:host': null,
      hostId: '',
      'OS-EXT-AZ:availability_zone': '',
    });
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['a missing name', { imageRef: IMAGE_REF, flavorRef: '1', networks: 'none' }, '2.64', /'name' is a required property/],
    ['missing networks from 2.37', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1' }, '2.37', /'networks' is a required property/],
    ['networks "none" before 2.37', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1', networks: 'none' }, '2.36', /is not of type 'array'/],
    ['a non-string metadata value', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1', networks: 'none', metadata: { n: 1 } }, '2.64', /metadata\/n.*1 is not of type 'string'/],
    ['an unknown flavor', { name: 'x', imageRef: IMAGE_REF, flavorRef: '99', networks: 'none' }, '2.64', /^Flavor 99 could not be found\.$/],
    ['a flavor name instead of an id', { name: 'x', imageRef: IMAGE_REF, flavorRef: 'm1.tiny', networks: 'none' }, '2.64', /^Flavor m1\.tiny could not be found\.$/],
    [
      'an image name instead of an id',
      { name: 'x', imageRef: 'cirros-fake', flavorRef: '1', networks: 'none' },
      '2.64',
      /^Invalid input for field\/attribute imageRef\. Value: cirros-fake\. 'cirros-fake' is not valid under any of the given schemas$/,
    ],
    [
      'an image link instead of an id',
      { name: 'x', imageRef: `http://glance/v2/images/${IMAGE_REF}`, flavorRef: '1', networks: 'none' },
      '2.64',
      /^Invalid input for field\/attribute imageRef\. Value: http:\/\/glance\/v2\/images\/.+ is not valid under any of the given schemas$/,
    ],
    ['a number as imageRef', { name: 'x', imageRef: 7, flavorRef: '1', networks: 'none' }, '2.64', /^Invalid input for field\/attribute imageRef\. Value: 7\. 7 is not valid/],
    ['an image name and an unknown flavor (the schema comes first)', { name: 'x', imageRef: 'cirros', flavorRef: '99', networks: 'none' }, '2.64', /field\/attribute imageRef/],
    ['an unknown property', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1', networks: 'none', colour: 'red' }, '2.64', /'colour' was unexpected/],
    ['a description before 2.19', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1', description: 'd' }, '2.1', /'description' was unexpected/],
    ['user_data that is not base64', { name: 'x', imageRef: IMAGE_REF, flavorRef: '1', networks: 'none', user_data: 'not base64!' }, '2.64', /valid base 64/],
  ])('refuses %s with 400', async (_what, server, version, message) => {
    const r = await call(sim, 'POST', SERVERS, { token: demo, version, body: { server } });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.code).toBe(400);
    expect(r.body.badRequest.message).toMatch(message);
  });

  it('accepts networks as a list or "auto", and none at all before 2.37', async () => {
    const base = { name: 'x', imageRef: IMAGE_REF, flavorRef: '1' };
    expect((await call(sim, 'POST', SERVERS, { token: demo, version: '2.1', body: { server: base } })).status).toBe(202);
    expect((await call(sim, 'POST', SERVERS, { token: demo, version: '2.64', body: { server: { ...base, networks: 'auto' } } })).status).toBe(202);
    expect((await call(sim, 'POST', SERVERS, { token: demo, version: '2.64', body: { server: { ...base, networks: [] } } })).status).toBe(202);
  });

  it('refuses an unknown or foreign server group hint with 400', async () => {
    const r = await boot(sim, { token: demo, group: '00000000-0000-4000-8000-000000000000' });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toContain('could not be found');
    const alt = await login(sim, 'alt_demo');
    const theirs = await createGroup(sim, alt, 'anti-affinity');
    expect((await boot(sim, { token: demo, group: theirs })).status).toBe(400);
  });

  it('lists servers with the name regex, status, limit and marker filters', async () => {
    for (const name of ['web-1', 'web-2', 'db-1']) await boot(sim, { token: demo, name, metadata: { role: name.split('-')[0] } });
    const names = async (query: string) =>
      (await call(sim, 'GET', `${SERVERS}/detail${query}`, { token: demo, version: '2.64' })).body.servers.map((s: { name: string }) => s.name);
    expect((await names('')).sort()).toEqual(['db-1', 'web-1', 'web-2']);
    expect((await names('?name=^web')).sort()).toEqual(['web-1', 'web-2']);
    expect(await names('?name=db')).toEqual(['db-1']);
    expect(await names('?status=ERROR')).toEqual([]);
    expect((await names('?status=active')).length).toBe(3);

    const page1 = await call(sim, 'GET', `${SERVERS}?limit=2`, { token: demo });
    expect(page1.body.servers).toHaveLength(2);
    expect(Object.keys(page1.body.servers[0]).sort()).toEqual(['id', 'links', 'name']);
    const next = page1.body.servers_links[0].href as string;
    expect(next).toContain(`marker=${page1.body.servers[1].id}`);
    const page2 = await call(sim, 'GET', next, { token: demo });
    expect(page2.body.servers).toHaveLength(1);
    expect((await call(sim, 'GET', `${SERVERS}?marker=nope`, { token: demo })).status).toBe(400);
    expect((await call(sim, 'GET', `${SERVERS}?status=BOGUS`, { token: demo, version: '2.38' })).status).toBe(400);
    expect((await call(sim, 'GET', `${SERVERS}?status=BOGUS`, { token: demo, version: '2.37' })).body.servers).toEqual([]);
  });

  it('lists by changes-since the servers changed at or after that time, deleted ones included, as their `updated` says', async () => {
    await call(sim, 'POST', '/_sim/config', { body: { build_delay_ms: 60_000 } });
    const old = (await boot(sim, { token: demo, name: 'old' })).body.server.id;
    const idle = (await boot(sim, { token: demo, name: 'idle' })).body.server.id;
    await advanceClock(sim, 120_000);
    const fresh = (await boot(sim, { token: demo, name: 'fresh' })).body.server.id;
    const since = (await call(sim, 'GET', `${SERVERS}/${fresh}`, { token: demo, version: '2.64' })).body.server.created as string;
    const changed = async () => {
      const r = await call(sim, 'GET', `${SERVERS}/detail?changes-since=${encodeURIComponent(since)}`, { token: demo, version: '2.64' });
      expect(r.status).toBe(200);
      return Object.fromEntries(r.body.servers.map((s: { name: string; status: string; updated: string }) => [s.name, s.status]));
    };
    expect(await changed()).toEqual({ fresh: 'BUILD' });

    // a request that changes a server, and a delete, make it "changed"; a deleted one is listed DELETED
    expect((await call(sim, 'PUT', `${SERVERS}/${old}`, { token: demo, body: { server: { name: 'renamed' } } })).status).toBe(200);
    expect((await call(sim, 'DELETE', `${SERVERS}/${idle}`, { token: demo })).status).toBe(204);
    await advanceClock(sim, 45_000);
    expect(await changed()).toEqual({ fresh: 'BUILD', renamed: 'ACTIVE', idle: 'DELETED' });
    for (const s of (await call(sim, 'GET', `${SERVERS}/detail?changes-since=${encodeURIComponent(since)}`, { token: demo, version: '2.64' })).body.servers) {
      expect(Date.parse(s.updated)).toBeGreaterThanOrEqual(Date.parse(since));
    }
    // without changes-since a deleted server is not listed
    expect((await call(sim, 'GET', `${SERVERS}/detail`, { token: demo })).body.servers.map((s: { name: string }) => s.name).sort()).toEqual(['fresh', 'renamed']);
    // gone (404) but still a row in Nova's database: listed DELETED by changes-since
    await advanceClock(sim, 60_000);
    expect((await call(sim, 'GET', `${SERVERS}/${idle}`, { token: demo })).status).toBe(404);
    expect(await changed()).toEqual({ fresh: 'ACTIVE', renamed: 'ACTIVE', idle: 'DELETED' });
    expect((await call(sim, 'GET', `${SERVERS}/detail?changes-since=yesterday`, { token: demo })).status).toBe(400);

    // an evacuation (the test control's migrate) saves the instance on its new host: changed then
    const still = (await boot(sim, { token: demo, name: 'still' })).body.server.id;
    await advanceClock(sim, 120_000);
    const later = new Date(Date.parse((await call(sim, 'GET', `${SERVERS}/${still}`, { token: demo, version: '2.64' })).body.server.updated) + 60_000).toISOString();
    await advanceClock(sim, 60_000);
    const host = (sim.state.snapshot() as { servers: Array<{ id: string; host: string | null }> }).servers.find((x) => x.id === still)!.host === 'host-1' ? 'host-2' : 'host-1';
    const since2 = async () =>
      (await call(sim, 'GET', `${SERVERS}/detail?changes-since=${encodeURIComponent(later)}`, { token: demo, version: '2.64' })).body.servers.map((x: { name: string }) => x.name);
    expect(await since2()).toEqual([]);
    expect((await call(sim, 'POST', `/_sim/servers/${still}/migrate`, { body: { host } })).status).toBe(200);
    expect(await since2()).toEqual(['still']);
  });

  it('deletes: ACTIVE with task_state deleting (still a member), then DELETED for a moment, then 404', async () => {
    await call(sim, 'POST', '/_sim/config', { body: { build_delay_ms: 600_000 } });
    const group = await createGroup(sim, demo, 'anti-affinity');
    const id = (await boot(sim, { token: demo, group })).body.server.id;
    await advanceClock(sim, 600_000);
    const show = async () => call(sim, 'GET', `${SERVERS}/${id}`, { token: demo, version: '2.64' });
    const members = async () => (await call(sim, 'GET', `/compute/v2.1/os-server-groups/${group}`, { token: demo })).body.server_group.members;
    expect((await show()).body.server.status).toBe('ACTIVE');

    expect((await call(sim, 'DELETE', `${SERVERS}/${id}`, { token: demo })).status).toBe(204);
    expect((await show()).body.server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'deleting', 'OS-EXT-STS:vm_state': 'active' });
    expect(await members()).toEqual([id]);
    expect((await call(sim, 'GET', SERVERS, { token: demo })).body.servers.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await call(sim, 'DELETE', `${SERVERS}/${id}`, { token: demo })).status).toBe(204);

    await advanceClock(sim, 300_000);
    expect((await show()).body.server).toMatchObject({ status: 'DELETED', 'OS-EXT-STS:task_state': null, 'OS-EXT-STS:vm_state': 'deleted' });
    expect(await members()).toEqual([]);
    expect((await call(sim, 'GET', SERVERS, { token: demo })).body.servers).toEqual([]);
    const again = await call(sim, 'DELETE', `${SERVERS}/${id}`, { token: demo });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });

    await advanceClock(sim, 300_000);
    const gone = await show();
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
  });

  it('deletes a server still in BUILD without a host at once: 404 right after, also for a second DELETE', async () => {
    await call(sim, 'POST', '/_sim/config', { body: { build_delay_ms: 600_000 } });
    const group = await createGroup(sim, demo, 'anti-affinity');
    const id = (await boot(sim, { token: demo, group })).body.server.id;
    expect((await call(sim, 'DELETE', `${SERVERS}/${id}`, { token: demo })).status).toBe(204);
    expect((await call(sim, 'GET', `${SERVERS}/${id}`, { token: demo })).status).toBe(404);
    expect((await call(sim, 'DELETE', `${SERVERS}/${id}`, { token: demo })).status).toBe(404);
    expect((await call(sim, 'GET', `/compute/v2.1/os-server-groups/${group}`, { token: demo })).body.server_group.members).toEqual([]);
  });

  it('with no build delay, a deleted server is gone at the next request', async () => {
    const quick = (await boot(sim, { token: demo })).body.server.id;
    expect((await call(sim, 'GET', `${SERVERS}/${quick}`, { token: demo })).body.server.status).toBe('ACTIVE');
    expect((await call(sim, 'DELETE', `${SERVERS}/${quick}`, { token: demo })).status).toBe(204);
    expect((await call(sim, 'GET', `${SERVERS}/${quick}`, { token: demo })).status).toBe(404);
    expect((await call(sim, 'DELETE', `${SERVERS}/${quick}`, { token: demo })).status).toBe(404);
  });

  it('lists the flavors and the one image so names can be resolved', async () => {
    const flavors = await call(sim, 'GET', '/compute/v2.1/flavors', { token: demo });
    expect(flavors.body.flavors.map((f: { name: string }) => f.name)).toContain('m1.tiny');
    const images = await call(sim, 'GET', '/image/v2/images?name=cirros-fake', { token: demo });
    expect(images.body.images).toHaveLength(1);
    expect((await bootAndShow(sim, { token: demo }, admin)).status).toBe('ACTIVE');
  });
});
