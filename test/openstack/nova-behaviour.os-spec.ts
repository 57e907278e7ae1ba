import { randomUUID } from 'node:crypto';
import { NovaError, type NovaPort, type Server } from '@trellis/nova';
import { REAL_CLOUD, assertRealCloudAnswers, cleanupCloud, realCloudClient, realCloudSettings } from './support/real-cloud';

/**
 * What real Nova does that the nova-worker relies on and the contract suite does not pin down,
 * several of them things the simulator does differently (see test/openstack/README.md).
 */

const PREFIX = 'os-behaviour-';
const run = `${PREFIX}${randomUUID().slice(0, 8)}`;
const BUILD_TIMEOUT_MS = 60_000;

async function settled(nova: NovaPort, id: string): Promise<Server> {
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  for (;;) {
    const s = await nova.getServer(id);
    if (s === null) throw new Error(`server ${id} vanished while building`);
    if (s.status !== 'BUILD') return s;
    if (Date.now() > deadline) throw new Error(`server ${id} still BUILD after ${BUILD_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('real Nova behaviour the worker relies on', () => {
  let admin: NovaPort;
  let member: NovaPort;
  const boot = (name: string, extra: { availabilityZone?: string; group?: string; imageRef?: string; flavorRef?: string } = {}) =>
    admin.createServer({
      name: `${run}-${name}`,
      imageRef: extra.imageRef ?? REAL_CLOUD.image,
      flavorRef: extra.flavorRef ?? REAL_CLOUD.flavor,
      networks: 'none',
      availabilityZone: extra.availabilityZone,
      schedulerHints: extra.group ? { group: extra.group } : undefined,
    });

  beforeAll(async () => {
    await assertRealCloudAnswers();
    await cleanupCloud(PREFIX);
    admin = realCloudClient('admin');
    member = realCloudClient('demo');
  });

  afterAll(async () => {
    if (admin) await cleanupCloud(run);
  });

  it("gives a member null for another project's server group (Nova answers 404, not 403)", async () => {
    const group = await admin.createServerGroup(`${run}-private`, 'affinity');
    expect(await member.getServerGroup(group.id)).toBeNull();
    expect(await member.findServerGroup(group.id)).toBeNull();
    await expect(member.deleteServerGroup(group.id)).resolves.toBeUndefined();
    expect((await admin.getServerGroup(group.id))?.id).toBe(group.id);
  });

  it('reports a server that found no host as ERROR with NoValidHost, no host, still a member of its group', async () => {
    const group = await admin.createServerGroup(`${run}-anti`, 'anti-affinity');
    const servers: Server[] = [];
    // one at a time: concurrent boots race past the scheduler and fail later, with another fault
    for (const n of [1, 2, 3]) servers.push(await settled(admin, (await boot(`anti-${n}`, { availabilityZone: 'az1', group: group.id })).id));
    expect(servers.map((s) => s.status)).toEqual(['ACTIVE', 'ACTIVE', 'ERROR']);
    expect(new Set(servers.slice(0, 2).map((s) => s.host))).toEqual(new Set(REAL_CLOUD.hostsByZone.az1));
    const failed = servers[2];
    expect(failed.fault).toEqual({ code: 500, message: REAL_CLOUD.noValidHost });
    expect(failed.host).toBeNull();
    expect(failed.hostId).toBeNull();
    expect(failed.availabilityZone).toBe('az1');
    expect((await admin.getServerGroup(group.id))?.members.sort()).toEqual(servers.map((s) => s.id).sort());
  });

  it("puts a server booted without a zone into its host's zone once scheduled", async () => {
    const s = await settled(admin, (await boot('no-zone')).id);
    expect(s.status).toBe('ACTIVE');
    expect(s.host).not.toBeNull();
    expect(REAL_CLOUD.hostsByZone[s.availabilityZone ?? '']).toContain(s.host);
  });

  it('names the DRS node apart from its service host', async () => {
    const s = await settled(admin, (await boot('drs', { availabilityZone: `az2::${REAL_CLOUD.drsHypervisor}` })).id);
    expect(s).toMatchObject({ status: 'ACTIVE', host: 'fake-host-4', hypervisorHostname: REAL_CLOUD.drsHypervisor, availabilityZone: 'az2' });
  });

  it('shows a deleted server as ACTIVE (task deleting) or DELETED for a moment, then not at all', async () => {
    const s = await settled(admin, (await boot('delete')).id);
    await admin.deleteServer(s.id);
    const seen = new Set<string>();
    const deadline = Date.now() + BUILD_TIMEOUT_MS;
    for (;;) {
      const now = await admin.getServer(s.id);
      if (now === null) break;
      seen.add(now.status);
      if (Date.now() > deadline) throw new Error(`server ${s.id} still there after its delete; seen ${[...seen].join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const status of seen) expect(['ACTIVE', 'DELETED']).toContain(status);
    expect(await admin.listServers({ name: `^${run}-delete$` })).toEqual([]);
  });

  it('refuses an unknown zone with a permanent BAD_REQUEST carrying Nova\'s message', async () => {
    const error = await boot('bad-zone', { availabilityZone: 'az-absent' }).catch((e) => e);
    expect(error).toBeInstanceOf(NovaError);
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST', transient: false, serviceMessage: 'The requested availability zone is not available' });
  });

  it('refuses an unknown image name before calling Nova, and Nova refuses an unknown flavor name', async () => {
    await expect(boot('bad-image', { imageRef: 'cirros-absent' })).rejects.toThrow(
      "server imageRef 'cirros-absent' is neither an image id nor the name of an image in Glance",
    );
    const error = await boot('bad-flavor', { flavorRef: 'm1.absent' }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, code: 'BAD_REQUEST', serviceMessage: 'Flavor m1.absent could not be found.' });
    expect(await admin.listServers({ name: `^${run}-bad-` })).toEqual([]);
  });

  it('lists a live-migrated server by changes-since, on its new host (what a survey between whole lists relies on)', async () => {
    const s = await settled(admin, (await boot('moved', { availabilityZone: 'az1' })).id);
    expect(s.status).toBe('ACTIVE');
    // `updated` has whole seconds: ask from a moment clearly after the build's
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const since = new Date(Date.now() - 1_000);
    expect((await admin.listServers({ changesSince: since })).map((x) => x.id)).not.toContain(s.id);

    const to = REAL_CLOUD.hostsByZone.az1.find((h) => h !== s.host)!;
    const compute = await adminCompute();
    const res = await fetch(`${compute.url}/servers/${s.id}/action`, {
      method: 'POST',
      headers: { 'X-Auth-Token': compute.token, 'Content-Type': 'application/json', 'X-OpenStack-Nova-API-Version': '2.30' },
      body: JSON.stringify({ 'os-migrateLive': { host: to, block_migration: 'auto' } }),
    });
    expect(res.status).toBe(202);
    const deadline = Date.now() + BUILD_TIMEOUT_MS;
    while ((await admin.getServer(s.id))?.host !== to) {
      if (Date.now() > deadline) throw new Error(`server ${s.id} not on ${to} after ${BUILD_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const changed = (await admin.listServers({ changesSince: since })).find((x) => x.id === s.id);
    expect(changed).toMatchObject({ host: to, availabilityZone: 'az1' });
    expect(Date.parse(changed!.updated!)).toBeGreaterThanOrEqual(since.getTime() - 1_000);
  });
});

/** The admin's token and the compute endpoint of its catalog, for a call NovaPort does not make. */
async function adminCompute(): Promise<{ token: string; url: string }> {
  const a = realCloudSettings('admin');
  const res = await fetch(`${a.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: a.username, domain: { name: a.userDomainName ?? 'Default' }, password: a.password } } },
        scope: { project: { name: a.projectName, domain: { name: a.projectDomainName ?? 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`Keystone refused the admin: ${res.status}`);
  const body = (await res.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } };
  const url = body.token.catalog.find((e) => e.type === 'compute')?.endpoints.find((e) => e.interface === 'public')?.url;
  if (!url) throw new Error('no public compute endpoint in the catalog');
  return { token: res.headers.get('x-subject-token')!, url: url.replace(/\/$/, '') };
}
