import { randomUUID } from 'node:crypto';
import type { OpenStackSettings } from '@trellis/common';
import {
  NovaForbiddenError,
  createNovaClient,
  findServerFor,
  trellisMetadata,
  type NovaPort,
  type Server,
  type ServerGroup,
} from '@trellis/nova';

/**
 * One NovaPort test suite for every Nova Trellis talks to: the simulator (test/e2e) and the real
 * Keystone + Nova of ../shared/openstack (test/openstack). What passes here is what the
 * nova-worker may rely on.
 */

export interface NovaContractFixture {
  /** credentials with the admin role (hypervisors, zone hosts) */
  settings: OpenStackSettings;
  /** credentials with the member role only; default: the same cloud as demo/demo in project demo */
  memberSettings?: OpenStackSettings;
  /** image name or id, flavor name or id */
  image: string;
  flavor: string;
  /** two availability zones servers can boot into */
  zones: [string, string];
  cleanup?: () => Promise<void>;
}

const BUILD_TIMEOUT_MS = 60_000;
const POLL_MS = 200;

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${BUILD_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function demoOf(settings: OpenStackSettings): OpenStackSettings {
  return { ...settings, username: 'demo', userId: null, password: 'demo', projectName: 'demo', projectId: null };
}

export function describeNovaClientContract(name: string, makeSettings: () => Promise<NovaContractFixture>): void {
  describe(`NovaPort contract: ${name}`, () => {
    let fixture: NovaContractFixture;
    let nova: NovaPort;
    let member: NovaPort;
    const run = randomUUID().slice(0, 8);
    const tag = { actionId: randomUUID(), nodeId: randomUUID() };
    const servers: string[] = [];
    const groups: string[] = [];
    let group: ServerGroup;
    let booted: Server;
    /** a minute before the server was asked for: clocks of this machine and Nova's may differ a little */
    let beforeBoot: Date;

    beforeAll(async () => {
      fixture = await makeSettings();
      nova = createNovaClient(fixture.settings);
      member = createNovaClient(fixture.memberSettings ?? demoOf(fixture.settings));
    });

    afterAll(async () => {
      if (!nova) return;
      for (const id of servers) await nova.deleteServer(id).catch(() => undefined);
      for (const id of servers) await waitFor(`server ${id} to go`, async () => ((await nova.getServer(id)) === null ? true : null)).catch(() => undefined);
      for (const id of groups) await nova.deleteServerGroup(id).catch(() => undefined);
      await fixture.cleanup?.();
    });

    it('negotiates a compute microversion of at least 2.64', async () => {
      const mv = await nova.microversion();
      expect(mv).toMatch(/^2\.\d+$/);
      expect(Number(mv.split('.')[1])).toBeGreaterThanOrEqual(64);
    });

    it('lists both availability zones, with their compute hosts for an admin', async () => {
      const plain = await nova.listAvailabilityZones();
      expect(plain.map((z) => z.name)).toEqual(expect.arrayContaining(fixture.zones));
      expect(plain.map((z) => z.name)).not.toContain('internal');
      const detail = await nova.listAvailabilityZones(true);
      for (const zone of fixture.zones) {
        const z = detail.find((d) => d.name === zone);
        expect(z?.available).toBe(true);
        expect(z?.hosts?.length).toBeGreaterThan(0);
      }
      const memberZones = await member.listAvailabilityZones();
      expect(memberZones.map((z) => z.name)).toEqual(expect.arrayContaining(fixture.zones));
    });

    it('creates an anti-affinity server group and finds it by id and by name', async () => {
      group = await nova.createServerGroup(`contract-${run}`, 'anti-affinity');
      groups.push(group.id);
      expect(group).toMatchObject({ name: `contract-${run}`, policy: 'anti-affinity', members: [] });
      expect((await nova.findServerGroup(group.id))?.name).toBe(`contract-${run}`);
      expect((await nova.findServerGroup(`contract-${run}`))?.id).toBe(group.id);
      expect((await nova.listServerGroups()).map((g) => g.id)).toContain(group.id);
      expect(await nova.findServerGroup(`contract-${run}-absent`)).toBeNull();
    });

    it('creates a server group with rules', async () => {
      const ruled = await nova.createServerGroup(`contract-${run}-rules`, 'anti-affinity', { max_server_per_host: 2 });
      groups.push(ruled.id);
      expect(ruled.rules).toEqual({ max_server_per_host: 2 });
    });

    it('boots a tagged server into a zone and the group, and it becomes ACTIVE there', async () => {
      beforeBoot = new Date(Date.now() - 60_000);
      const { id } = await nova.createServer({
        name: `contract-${run}-1`,
        imageRef: fixture.image,
        flavorRef: fixture.flavor,
        networks: 'none',
        availabilityZone: fixture.zones[1],
        schedulerHints: { group: group.id },
        metadata: trellisMetadata({ ...tag, clusterId: randomUUID() }),
      });
      servers.push(id);
      booted = await waitFor(`server ${id} to leave BUILD`, async () => {
        const s = await nova.getServer(id);
        return s && s.status !== 'BUILD' ? s : null;
      });
      expect(booted.fault).toBeNull();
      expect(booted.status).toBe('ACTIVE');
      expect(booted.availabilityZone).toBe(fixture.zones[1]);
      expect(booted.host).not.toBeNull();
      expect(booted.hostId).not.toBeNull();
      expect((await nova.getServerGroup(group.id))?.members).toEqual([id]);
    });

    it('finds the server again by its tags, and only it', async () => {
      expect((await findServerFor(nova, tag))?.id).toBe(booted.id);
      expect(await findServerFor(nova, { ...tag, nodeId: randomUUID() })).toBeNull();
      const listed = await nova.listServers({ metadata: { trellis_action: tag.actionId }, name: `^contract-${run}` });
      expect(listed.map((s) => s.id)).toEqual([booted.id]);
    });

    it('lists it by changes-since a time before it was made, as getServer shows it, and not since a time after', async () => {
      const changed = await nova.listServers({ changesSince: beforeBoot });
      const listed = changed.find((s) => s.id === booted.id);
      expect(listed).toMatchObject({ status: 'ACTIVE', availabilityZone: booted.availabilityZone, host: booted.host, hostId: booted.hostId });
      const later = await nova.listServers({ changesSince: new Date(Date.now() + 3_600_000) });
      expect(later.map((s) => s.id)).not.toContain(booted.id);
    });

    it("does not show another project's server to a member", async () => {
      expect(await member.getServer(booted.id)).toBeNull();
    });

    it('lists hypervisors for an admin, with a DRS cluster among them', async () => {
      const hypervisors = await nova.listHypervisors();
      expect(hypervisors.length).toBeGreaterThan(0);
      for (const h of hypervisors) {
        expect(typeof h.id).toBe('string');
        expect(h.serviceHost).toBeTruthy();
      }
      expect(hypervisors.some((h) => /drs/i.test(h.hypervisorHostname))).toBe(true);
      expect(hypervisors.map((h) => h.serviceHost)).toContain(booted.host);
    });

    it('refuses hypervisors to a member with NovaForbiddenError', async () => {
      const error = await member.listHypervisors().catch((e) => e);
      expect(error).toBeInstanceOf(NovaForbiddenError);
      expect(error.message).toMatch(/^listing hypervisors needs the admin role \(Nova answered 403: .+\)$/);
    });

    it('deletes the server and the group; deleting again is not an error', async () => {
      await nova.deleteServer(booted.id);
      await waitFor(`server ${booted.id} to go`, async () => ((await nova.getServer(booted.id)) === null ? true : null));
      await expect(nova.deleteServer(booted.id)).resolves.toBeUndefined();
      // a list by changes-since shows a deleted server, as DELETED (the build poller's "gone")
      const changed = await waitFor(`server ${booted.id} to be listed DELETED`, async () => {
        const s = (await nova.listServers({ changesSince: beforeBoot })).find((x) => x.id === booted.id);
        return s?.status === 'DELETED' ? s : null;
      });
      expect(changed.id).toBe(booted.id);
      await nova.deleteServerGroup(group.id);
      expect(await nova.getServerGroup(group.id)).toBeNull();
      await expect(nova.deleteServerGroup(group.id)).resolves.toBeUndefined();
    });
  });
}
