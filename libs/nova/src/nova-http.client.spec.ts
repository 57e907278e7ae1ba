import { createNovaClient, type NovaClientOptions } from './nova-http.client';
import { NovaForbiddenError, NovaMicroversionError } from './nova.errors';
import { findServerFor, trellisMetadata } from './idempotency';
import { FakeOpenStack, adminSettings, recordingSleep, sample, type RecordedRequest } from './testing/fake-openstack';
import type { OpenStackSettings } from '@trellis/common';

const GROUP_ID = '03cbb23d-9576-46f4-9bc7-ad6a2ccdc716';

describe('NovaHttpClient', () => {
  let fake: FakeOpenStack;
  let delays: number[];

  beforeEach(async () => {
    fake = await FakeOpenStack.start();
    fake.withKeystone();
  });
  afterEach(() => fake.close());

  const client = (settings: Partial<OpenStackSettings> = {}, options: NovaClientOptions = {}) => {
    const sleep = recordingSleep();
    delays = sleep.delays;
    return createNovaClient(adminSettings(fake, settings), { sleep: sleep.sleep, random: () => 0.5, cwd: '/nonexistent', homeDir: '/nonexistent', ...options });
  };
  const computeCalls = () => fake.requests.filter((r) => r.pathname.startsWith('/compute/v2.1/'));

  describe('microversion negotiation', () => {
    it('uses 2.93 from a Zed Nova and sends both headers on every call', async () => {
      fake.withNovaVersion('2.93');
      fake.on('GET', '/compute/v2.1/os-server-groups', () => ({ status: 200, body: sample('os-server-groups.2.64.json') }));
      fake.on('GET', '/compute/v2.1/os-availability-zone', () => ({ status: 200, body: { availabilityZoneInfo: [] } }));
      const nova = client();
      expect(await nova.microversion()).toBe('2.93');
      await nova.listServerGroups();
      await nova.listAvailabilityZones();
      expect(computeCalls()).toHaveLength(2);
      for (const call of computeCalls()) {
        expect(call.headers['openstack-api-version']).toBe('compute 2.93');
        expect(call.headers['x-openstack-nova-api-version']).toBe('2.93');
        expect(call.headers['x-auth-token']).toBe('token-1');
      }
      expect(fake.to('GET', '/compute/v2.1')).toHaveLength(1);
    });

    it('caps a newer Nova at 2.93', async () => {
      fake.withNovaVersion('2.96');
      expect(await client().microversion()).toBe('2.93');
    });

    it('uses a pinned microversion without asking', async () => {
      fake.withNovaVersion('2.93');
      expect(await client({ computeApiVersion: '2.64' }).microversion()).toBe('2.64');
      expect(fake.to('GET', '/compute/v2.1')).toHaveLength(0);
    });

    it('follows the root version list when the endpoint override is the service root', async () => {
      fake.on('GET', '/', () => ({
        status: 200,
        body: {
          versions: [
            { id: 'v2.0', status: 'SUPPORTED', version: '', min_version: '', links: [{ rel: 'self', href: `${fake.url}/v2/` }] },
            { id: 'v2.1', status: 'CURRENT', version: '2.79', min_version: '2.1', links: [{ rel: 'self', href: `${fake.computeUrl}/` }] },
          ],
        },
      }));
      fake.on('GET', '/compute/v2.1/os-availability-zone', () => ({ status: 200, body: { availabilityZoneInfo: [] } }));
      const nova = client({ computeEndpoint: `${fake.url}/` });
      expect(await nova.microversion()).toBe('2.79');
      await nova.listAvailabilityZones();
      expect(fake.to('GET', '/compute/v2.1/os-availability-zone')).toHaveLength(1);
    });

    it('falls back to the root document when the endpoint has none', async () => {
      fake.on('GET', '/compute/v2.1', () => ({ status: 404 }));
      fake.on('GET', '/', () => ({ status: 200, body: { versions: [{ id: 'v2.1', status: 'CURRENT', version: '2.60', min_version: '2.1', links: [] }] } }));
      expect(await client().microversion()).toBe('2.60');
    });

    it('explains a Nova that requires a newer microversion than the client speaks', async () => {
      fake.withNovaVersion('2.99', '2.95');
      await expect(client().microversion()).rejects.toThrow('this Nova requires compute microversion 2.95 or newer; this client speaks 2.1 to 2.93');
    });
  });

  describe('on an old Nova (2.60)', () => {
    beforeEach(() => {
      fake.withNovaVersion('2.60');
      fake.on('POST', '/compute/v2.1/os-server-groups', (req) => ({
        status: 200,
        body: { server_group: { id: GROUP_ID, name: req.body.server_group.name, policies: req.body.server_group.policies, metadata: {}, members: [] } },
      }));
    });

    it('creates server groups with a policies list and reads policies[0]', async () => {
      const group = await client().createServerGroup('web', 'soft-anti-affinity');
      expect(fake.to('POST', '/compute/v2.1/os-server-groups')[0].body).toEqual({ server_group: { name: 'web', policies: ['soft-anti-affinity'] } });
      expect(group).toEqual({ id: GROUP_ID, name: 'web', policy: 'soft-anti-affinity', rules: {}, members: [] });
    });

    it('refuses rules, which need 2.64, before calling Nova', async () => {
      await expect(client().createServerGroup('web', 'anti-affinity', { max_server_per_host: 2 })).rejects.toThrow(
        'server group rules need compute microversion 2.64; this Nova is used at 2.60',
      );
      expect(fake.to('POST', '/compute/v2.1/os-server-groups')).toHaveLength(0);
    });

    it('refuses soft policies below 2.15', async () => {
      const error = await client({ computeApiVersion: '2.14' })
        .createServerGroup('web', 'soft-affinity')
        .catch((e) => e);
      expect(error).toBeInstanceOf(NovaMicroversionError);
      expect(error.message).toBe("server group policy 'soft-affinity' needs compute microversion 2.15; this Nova is used at 2.14");
    });

    it('leaves networks "none" out below 2.37, and sends it from 2.37', async () => {
      fake.on('GET', /^\/compute\/v2\.1\/flavors\//, () => ({ status: 200, body: { flavor: { id: '1' } } }));
      fake.on('POST', '/compute/v2.1/servers', () => ({ status: 202, body: { server: { id: 'new-server' } } }));
      const request = { name: 'n', imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25', flavorRef: '1', networks: 'none' as const };
      await client({ computeApiVersion: '2.30' }).createServer(request);
      await client().createServer(request);
      const [old, current] = fake.to('POST', '/compute/v2.1/servers');
      expect(old.body.server).not.toHaveProperty('networks');
      expect(current.body.server.networks).toBe('none');
    });
  });

  describe('server groups at 2.64+', () => {
    beforeEach(() => fake.withNovaVersion('2.93'));

    it('creates with policy and rules', async () => {
      fake.on('POST', '/compute/v2.1/os-server-groups', () => ({ status: 200, body: { server_group: sample('os-server-groups.2.64.json').server_groups[2] } }));
      const group = await client().createServerGroup('smoke-raw', 'anti-affinity', { max_server_per_host: 1 });
      expect(fake.to('POST', '/compute/v2.1/os-server-groups')[0].body).toEqual({
        server_group: { name: 'smoke-raw', policy: 'anti-affinity', rules: { max_server_per_host: 1 } },
      });
      expect(group.rules).toEqual({ max_server_per_host: 1 });
    });

    it('refuses rules on a policy other than anti-affinity, and unknown policies', async () => {
      await expect(client().createServerGroup('g', 'affinity', { max_server_per_host: 1 })).rejects.toThrow(
        "server group rules are allowed only with the anti-affinity policy, not 'affinity'",
      );
      await expect(client().createServerGroup('g', 'spread' as never)).rejects.toThrow("server group policy 'spread' is not one of");
    });

    it('finds a group by id, then by name, and treats a missing one as null', async () => {
      const groups = sample('os-server-groups.2.64.json').server_groups;
      fake.on('GET', /^\/compute\/v2\.1\/os-server-groups\/.+/, (req) => {
        const g = groups.find((x: { id: string }) => req.pathname.endsWith(`/${x.id}`));
        return g ? { status: 200, body: { server_group: g } } : { status: 404, body: { itemNotFound: { message: 'not found' } } };
      });
      fake.on('GET', '/compute/v2.1/os-server-groups', () => ({ status: 200, body: { server_groups: groups } }));
      const nova = client();
      expect((await nova.findServerGroup(GROUP_ID))?.name).toBe('smoke-raw');
      expect((await nova.findServerGroup('smoke-aff'))?.id).toBe('8b09a785-5708-45e2-b2bf-246f121883ed');
      expect(await nova.findServerGroup('nothing')).toBeNull();
      expect(await nova.getServerGroup('a8b602cc-07f2-40d5-bc55-174cf180afb0')).toBeNull();
    });

    it('refuses to guess between groups with the same name', async () => {
      const [a, b] = sample('os-server-groups.2.64.json').server_groups;
      fake.on('GET', '/compute/v2.1/os-server-groups', () => ({ status: 200, body: { server_groups: [a, { ...b, name: a.name }] } }));
      await expect(client().findServerGroup('smoke-anti')).rejects.toThrow("2 server groups are named 'smoke-anti'");
    });

    it('pages through server groups', async () => {
      const groups = Array.from({ length: 5 }, (_, i) => ({ id: `g${i}`, name: `g${i}`, policy: 'affinity', rules: {}, members: [] }));
      fake.on('GET', '/compute/v2.1/os-server-groups', (req) => {
        const offset = Number(req.query.get('offset'));
        return { status: 200, body: { server_groups: groups.slice(offset, offset + Number(req.query.get('limit'))) } };
      });
      expect((await client({}, { pageSize: 2 }).listServerGroups()).map((g) => g.id)).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
    });

    it('treats deleting a group that is gone as done', async () => {
      fake.on('DELETE', /os-server-groups/, () => ({ status: 404, body: { itemNotFound: { message: 'gone' } } }));
      await expect(client().deleteServerGroup(GROUP_ID)).resolves.toBeUndefined();
    });
  });

  describe('servers', () => {
    beforeEach(() => fake.withNovaVersion('2.93'));

    it('boots with zone, group hint, metadata, networks, key and user data, resolving a flavor name', async () => {
      fake.on('GET', '/compute/v2.1/flavors/m1.tiny', () => ({ status: 404, body: { itemNotFound: { message: 'Flavor m1.tiny could not be found.' } } }));
      fake.on('GET', '/compute/v2.1/flavors', () => ({ status: 200, body: { flavors: [{ id: '1', name: 'm1.tiny' }, { id: '2', name: 'm1.small' }] } }));
      fake.on('POST', '/compute/v2.1/servers', () => ({ status: 202, body: { server: { id: 'srv-1', adminPass: 'x' } } }));
      const metadata = trellisMetadata({ actionId: 'a1', nodeId: 'n1', clusterId: 'c1' });
      const created = await client().createServer({
        name: 'node-1',
        imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
        flavorRef: 'm1.tiny',
        networks: 'none',
        availabilityZone: 'az1',
        schedulerHints: { group: GROUP_ID },
        metadata,
        keyName: 'k',
        userData: '#!/bin/sh\necho hi',
      });
      expect(created).toEqual({ id: 'srv-1' });
      expect(fake.to('POST', '/compute/v2.1/servers')[0].body).toEqual({
        server: {
          name: 'node-1',
          imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
          flavorRef: '1',
          networks: 'none',
          availability_zone: 'az1',
          metadata: { trellis_action: 'a1', trellis_node: 'n1', trellis_cluster: 'c1' },
          key_name: 'k',
          user_data: Buffer.from('#!/bin/sh\necho hi').toString('base64'),
        },
        'os:scheduler_hints': { group: GROUP_ID },
      });
    });

    it('resolves an image name in Glance', async () => {
      fake.withKeystone({ catalog: fake.catalog([{ type: 'image', name: 'glance', endpoints: [{ interface: 'public', region: 'RegionOne', url: `${fake.url}/image` }] }]) });
      fake.on('GET', '/image/v2/images', (req) =>
        req.query.get('name') === 'cirros-fake' ? { status: 200, body: { images: [{ id: 'img-uuid' }] } } : { status: 200, body: { images: [] } },
      );
      fake.on('GET', '/compute/v2.1/flavors/1', () => ({ status: 200, body: { flavor: { id: '1' } } }));
      fake.on('POST', '/compute/v2.1/servers', () => ({ status: 202, body: { server: { id: 'srv' } } }));
      const nova = client();
      await nova.createServer({ name: 'n', imageRef: 'cirros-fake', flavorRef: '1', networks: [] });
      await nova.createServer({ name: 'n', imageRef: 'cirros-fake', flavorRef: '1', networks: [] });
      expect(fake.to('POST', '/compute/v2.1/servers').map((r) => r.body.server.imageRef)).toEqual(['img-uuid', 'img-uuid']);
      expect(fake.to('GET', '/image/v2/images')).toHaveLength(1);
    });

    it('refuses an image name Glance does not know, before calling Nova', async () => {
      fake.withKeystone({ catalog: fake.catalog([{ type: 'image', name: 'glance', endpoints: [{ interface: 'public', region: 'RegionOne', url: `${fake.url}/image` }] }]) });
      fake.on('GET', '/image/v2/images', () => ({ status: 200, body: { images: [] } }));
      fake.on('GET', '/compute/v2.1/flavors/1', () => ({ status: 200, body: { flavor: { id: '1' } } }));
      await expect(client().createServer({ name: 'n', imageRef: 'cirros-absent', flavorRef: '1', networks: [] })).rejects.toThrow(
        "server imageRef 'cirros-absent' is neither an image id nor the name of an image in Glance",
      );
      expect(fake.to('POST', '/compute/v2.1/servers')).toHaveLength(0);
    });

    it('refuses a create without an image, naming the field', async () => {
      await expect(client().createServer({ name: 'n', imageRef: '', flavorRef: '1', networks: 'none' })).rejects.toThrow('server imageRef must be a non-empty string');
    });

    it('after an ambiguous create failure finds the tagged server instead of booting a second one', async () => {
      const tagged = { ...sample('server-show.2.64.json').server, id: 'booted', metadata: { trellis_action: 'a1', trellis_node: 'n1' } };
      fake.on('GET', /flavors/, () => ({ status: 200, body: { flavor: { id: '1' } } }));
      fake.sequence('POST', '/compute/v2.1/servers', [{ status: 504, body: 'Gateway Timeout' }]);
      fake.on('GET', '/compute/v2.1/servers/detail', () => ({ status: 200, body: { servers: [tagged] } }));
      const created = await client().createServer({
        name: 'n',
        imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
        flavorRef: '1',
        networks: 'none',
        metadata: trellisMetadata({ actionId: 'a1', nodeId: 'n1' }),
      });
      expect(created).toEqual({ id: 'booted', uncertain: true });
      expect(fake.to('POST', '/compute/v2.1/servers')).toHaveLength(1);
    });

    it('creates again after an ambiguous failure when the lookup finds nothing', async () => {
      fake.on('GET', /flavors/, () => ({ status: 200, body: { flavor: { id: '1' } } }));
      fake.sequence('POST', '/compute/v2.1/servers', [{ status: 500 }, { status: 202, body: { server: { id: 'second-try' } } }]);
      fake.on('GET', '/compute/v2.1/servers/detail', () => ({ status: 200, body: { servers: [] } }));
      const created = await client().createServer({
        name: 'n',
        imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
        flavorRef: '1',
        networks: 'none',
        metadata: trellisMetadata({ actionId: 'a1', nodeId: 'n1' }),
      });
      // uncertain: the first try may have made a server that showed only after the look (the worker sweeps it)
      expect(created).toEqual({ id: 'second-try', uncertain: true });
      // it waits for a create still in Nova's hands to land before looking (a look at once races it)
      expect(delays).toEqual([5_000]);
    });

    it('does not repeat an untagged create whose outcome is unknown', async () => {
      fake.on('GET', /flavors/, () => ({ status: 200, body: { flavor: { id: '1' } } }));
      fake.sequence('POST', '/compute/v2.1/servers', [{ status: 500, body: { computeFault: { message: 'oops' } } }]);
      await expect(client().createServer({ name: 'n', imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25', flavorRef: '1', networks: 'none' })).rejects.toThrow(
        'Nova POST /compute/v2.1/servers answered 500: oops',
      );
      expect(fake.to('POST', '/compute/v2.1/servers')).toHaveLength(1);
    });

    it('lists /servers/detail page by page, with the name filter, and filters metadata itself', async () => {
      const all = sample('servers-detail.2.64.json').servers.map((s: Record<string, unknown>, i: number) => ({
        ...s,
        metadata: i % 2 === 0 ? { trellis_action: 'a1', trellis_node: `n${i}` } : {},
      }));
      fake.on('GET', '/compute/v2.1/servers/detail', (req: RecordedRequest) => {
        const marker = req.query.get('marker');
        const start = marker ? all.findIndex((s: { id: string }) => s.id === marker) + 1 : 0;
        return { status: 200, body: { servers: all.slice(start, start + Number(req.query.get('limit'))) } };
      });
      const servers = await client({}, { pageSize: 2 }).listServers({ metadata: { trellis_action: 'a1' }, name: '^smoke-' });
      expect(servers.map((s) => s.name)).toEqual(['smoke-anti-5', 'smoke-anti-3', 'smoke-anti-1']);
      const pages = fake.to('GET', '/compute/v2.1/servers/detail');
      expect(pages.map((p) => p.query.get('marker'))).toEqual([null, all[1].id, all[3].id]);
      expect(pages.every((p) => p.query.get('name') === '^smoke-')).toBe(true);
    });

    it('asks for the servers changed since a time with changes-since, on every page', async () => {
      const all = sample('servers-detail.2.64.json').servers;
      fake.on('GET', '/compute/v2.1/servers/detail', (req: RecordedRequest) => {
        const marker = req.query.get('marker');
        const start = marker ? all.findIndex((s: { id: string }) => s.id === marker) + 1 : 0;
        return { status: 200, body: { servers: all.slice(start, start + Number(req.query.get('limit'))) } };
      });
      const since = new Date('2026-11-27T18:00:00.000Z');
      const servers = await client({}, { pageSize: 4 }).listServers({ changesSince: since });
      expect(servers).toHaveLength(all.length);
      const pages = fake.to('GET', '/compute/v2.1/servers/detail');
      expect(pages.length).toBeGreaterThan(1);
      expect(pages.every((p) => p.query.get('changes-since') === '2026-11-27T18:00:00.000Z')).toBe(true);
    });

    it('finds the server of an action and node', async () => {
      const servers = sample('servers-detail.2.64.json').servers;
      servers[2].metadata = trellisMetadata({ actionId: 'a1', nodeId: 'n2' });
      fake.on('GET', '/compute/v2.1/servers/detail', () => ({ status: 200, body: { servers } }));
      const nova = client();
      expect((await findServerFor(nova, { actionId: 'a1', nodeId: 'n2' }))?.id).toBe(servers[2].id);
      expect(await findServerFor(nova, { actionId: 'a1', nodeId: 'n3' })).toBeNull();
    });

    it('shows a server, null when Nova has none', async () => {
      fake.on('GET', /^\/compute\/v2\.1\/servers\/[^/]+$/, (req) =>
        req.pathname.endsWith('/1ec49c24-da5c-4009-8a7c-2e048ee0f3e6')
          ? { status: 200, body: sample('server-show.2.64.json') }
          : { status: 404, body: { itemNotFound: { message: 'Instance could not be found.' } } },
      );
      const nova = client();
      expect((await nova.getServer('1ec49c24-da5c-4009-8a7c-2e048ee0f3e6'))?.host).toBe('fake-host-1');
      expect(await nova.getServer('missing')).toBeNull();
    });

    it('deletes, treating 404 as done and retrying a 409 task state', async () => {
      fake.sequence('DELETE', '/compute/v2.1/servers/s1', [{ status: 409, body: { conflictingRequest: { message: 'task_state deleting' } } }, { status: 204 }]);
      fake.on('DELETE', '/compute/v2.1/servers/s2', () => ({ status: 404, body: { itemNotFound: { message: 'gone' } } }));
      const nova = client();
      await nova.deleteServer('s1');
      await nova.deleteServer('s2');
      expect(fake.to('DELETE', '/compute/v2.1/servers/s1')).toHaveLength(2);
    });

    it('resizes to a flavor given by name (its id looked up), confirms, renames and replaces metadata with PUTs', async () => {
      fake.on('GET', '/compute/v2.1/flavors/m1.small', () => ({ status: 404, body: { itemNotFound: { message: 'Flavor m1.small could not be found.' } } }));
      fake.on('GET', '/compute/v2.1/flavors', () => ({ status: 200, body: { flavors: [{ id: '1', name: 'm1.tiny' }, { id: '2', name: 'm1.small' }] } }));
      fake.on('POST', '/compute/v2.1/servers/s1/action', () => ({ status: 202 }));
      fake.on('PUT', '/compute/v2.1/servers/s1', () => ({ status: 200, body: { server: { id: 's1', name: 'web-1' } } }));
      fake.on('PUT', '/compute/v2.1/servers/s1/metadata', (req) => ({ status: 200, body: req.body }));
      const nova = client();
      await nova.serverAction('s1', { action: 'resize', flavorRef: 'm1.small' });
      await nova.serverAction('s1', { action: 'confirmResize' });
      await nova.updateServer('s1', { name: 'web-1' });
      await nova.setServerMetadata('s1', { tier: 'web' });
      expect(fake.to('POST', '/compute/v2.1/servers/s1/action').map((r) => r.body)).toEqual([{ resize: { flavorRef: '2' } }, { confirmResize: null }]);
      expect(fake.to('PUT', '/compute/v2.1/servers/s1')[0].body).toEqual({ server: { name: 'web-1' } });
      expect(fake.to('PUT', '/compute/v2.1/servers/s1/metadata')[0].body).toEqual({ metadata: { tier: 'web' } });
    });

    it('reads the flavor a server runs by id before 2.47 (from 2.47 on by name: normalise.spec)', async () => {
      fake.on('GET', '/compute/v2.1/servers/old', () => ({ status: 200, body: { server: { id: 'old', status: 'ACTIVE', flavor: { id: '1', links: [] } } } }));
      const nova = client();
      expect((await nova.getServer('old'))?.flavor).toEqual({ id: '1', name: null });
    });

    it('reports a body it cannot read, naming the field', async () => {
      fake.on('GET', '/compute/v2.1/servers/x', () => ({ status: 200, body: { server: { id: 'x', name: 'n' } } }));
      await expect(client().getServer('x')).rejects.toThrow('Nova GET /compute/v2.1/servers/x answered an unexpected body: server.status is missing');
    });
  });

  describe('zones and hypervisors', () => {
    beforeEach(() => fake.withNovaVersion('2.93'));

    it('lists zones in both views', async () => {
      fake.on('GET', '/compute/v2.1/os-availability-zone/detail', () => ({ status: 200, body: sample('os-availability-zone-detail.json') }));
      fake.on('GET', '/compute/v2.1/os-availability-zone', () => ({
        status: 200,
        body: { availabilityZoneInfo: [{ zoneName: 'az1', zoneState: { available: true }, hosts: null }] },
      }));
      const nova = client();
      expect(await nova.listAvailabilityZones()).toEqual([{ name: 'az1', available: true, hosts: null }]);
      expect((await nova.listAvailabilityZones(true)).map((z) => z.name)).toEqual(['az1', 'az2']);
    });

    it('lists hypervisors with paging from 2.33', async () => {
      const all = sample('os-hypervisors-detail.2.88.json').hypervisors;
      fake.on('GET', '/compute/v2.1/os-hypervisors/detail', (req) => {
        const marker = req.query.get('marker');
        const start = marker ? all.findIndex((h: { id: string }) => h.id === marker) + 1 : 0;
        return { status: 200, body: { hypervisors: all.slice(start, start + Number(req.query.get('limit'))) } };
      });
      const hypervisors = await client({}, { pageSize: 3 }).listHypervisors();
      expect(hypervisors.map((h) => h.hypervisorHostname)).toEqual(['fake-host-3', 'fake-host-2', 'fake-host-1', 'fake-drs-cluster-4']);
    });

    it('explains that hypervisors need the admin role', async () => {
      fake.on('GET', '/compute/v2.1/os-hypervisors/detail', () => ({
        status: 403,
        body: { forbidden: { code: 403, message: 'Policy doesn\'t allow os_compute_api:os-hypervisors:list-detail to be performed.' } },
      }));
      const error = await client().listHypervisors().catch((e) => e);
      expect(error).toBeInstanceOf(NovaForbiddenError);
      expect(error.code).toBe('FORBIDDEN');
      expect(error.message).toBe(
        "listing hypervisors needs the admin role (Nova answered 403: Policy doesn't allow os_compute_api:os-hypervisors:list-detail to be performed.)",
      );
    });
  });
});
