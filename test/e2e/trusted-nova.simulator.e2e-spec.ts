import { ConfigError, type OpenStackSettings } from '@trellis/common';
// The trust client and the trust-scoped Nova pool against the simulator's Keystone + Nova. It lives in
// test/e2e, not beside the code: a lib's spec must not import an app.
import { startNovaSimulator, type RunningSimulator } from '../../apps/nova-simulator/src/simulator';
import { authRequestBody, resolveCredentials } from '../../libs/identity/src/keystone/credentials';
import { defaultRuntime } from '../../libs/identity/src/keystone/http-transport';
import { createSession, issueToken } from '../../libs/identity/src/keystone/session';
import { NovaError, NovaForbiddenError } from '../../libs/nova/src/nova.errors';
import { TrustError, TrustedNovaPool } from '../../libs/nova/src/trusted-nova';
import { KeystoneTrusts } from '../../libs/identity/src/keystone/trusts';

const settings = (sim: RunningSimulator, over: Partial<OpenStackSettings>): OpenStackSettings => ({
  cloud: null,
  cloudsFile: null,
  authUrl: sim.authUrl,
  authType: null,
  username: null,
  userId: null,
  password: null,
  userDomainName: 'Default',
  userDomainId: null,
  projectName: null,
  projectId: null,
  projectDomainName: 'Default',
  projectDomainId: null,
  regionName: 'RegionOne',
  interface: 'public',
  applicationCredentialId: null,
  applicationCredentialName: null,
  applicationCredentialSecret: null,
  computeEndpoint: null,
  computeApiVersion: null,
  ...over,
});

const IMAGE = 'a83c3c75-fc9c-4be2-aebf-735c080a4c25';
const fast = { retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 } };

describe('Keystone trusts and the trusted Nova pool (against the simulator)', () => {
  let sim: RunningSimulator;
  let service: OpenStackSettings;
  let alt: OpenStackSettings;
  let altToken: string;
  let trusts: KeystoneTrusts;
  let ids: { altDemo: string; altProject: string; trellis: string; demo: string };

  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    service = settings(sim, { username: 'trellis', password: 'service-secret', projectName: 'service' });
    alt = settings(sim, { username: 'alt_demo', password: 'demo', projectName: 'alt_demo' });
    altToken = await issueToken(alt);
    trusts = new KeystoneTrusts(createSession(service).session, defaultRuntime());
    const user = (name: string) => sim.state.identity.users.find((u) => u.name === name)!.id;
    ids = { altDemo: user('alt_demo'), trellis: user('trellis'), demo: user('demo'), altProject: sim.state.projectId('alt_demo') };
  });
  afterAll(() => sim.close());

  /** As the simulator's admin sees a server or group: its project and user. */
  const owner = async (path: string): Promise<{ project: string; user: string }> => {
    const admin = await issueToken(settings(sim, { username: 'admin', password: 'admin', projectName: 'admin' }));
    const res = await fetch(`${sim.computeUrl}${path}`, { headers: { 'X-Auth-Token': admin, 'OpenStack-API-Version': 'compute 2.64' } });
    const body = (await res.json()) as Record<string, Record<string, string>>;
    const item = body.server ?? body.server_group;
    return { project: item.tenant_id ?? item.project_id, user: item.user_id };
  };

  const altTrust = () => trusts.create(altToken, { trustorUserId: ids.altDemo, projectId: ids.altProject, roles: ['member'] });

  describe('KeystoneTrusts', () => {
    it("reads the service user's id and project from its token", async () => {
      expect(await trusts.serviceUserId()).toBe(ids.trellis);
      const token = await createSession(service).session.token();
      expect([token.userId, token.projectId]).toEqual([ids.trellis, sim.state.projectId('service')]);
    });

    it('creates a trust with the trustor token, reads it with the service token, deletes it with the trustor token', async () => {
      const trust = await altTrust();
      expect(trust).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        trustorUserId: ids.altDemo,
        trusteeUserId: ids.trellis,
        projectId: ids.altProject,
        roles: ['member'],
        impersonation: true,
        expiresAt: null,
      });
      expect(await trusts.get(trust.id)).toEqual(trust);
      await trusts.delete(altToken, trust.id);
      expect(await trusts.get(trust.id)).toBeNull();
      await expect(trusts.delete(altToken, trust.id)).resolves.toBeUndefined();
    });

    it("passes on Keystone's refusal of a role the trustor lacks, and of another trustor", async () => {
      const lacking = trusts.create(altToken, { trustorUserId: ids.altDemo, projectId: ids.altProject, roles: ['admin'] });
      await expect(lacking).rejects.toBeInstanceOf(NovaError);
      await expect(lacking).rejects.toMatchObject({ status: 404, serviceMessage: expect.stringMatching(/^Could not find role: [0-9a-f]{32}\.$/) });
      const demoToken = await issueToken(settings(sim, { username: 'demo', password: 'demo', projectName: 'demo' }));
      await expect(trusts.create(demoToken, { trustorUserId: ids.altDemo, projectId: ids.altProject, roles: ['member'] })).rejects.toMatchObject({
        status: 403,
        serviceMessage: 'You are not authorized to perform the requested action: identity:create_trust.',
      });
    });
  });

  describe('TrustedNovaPool', () => {
    it("acts in Nova as the trustor in the trust's project, under a member's rules", async () => {
      const trust = await altTrust();
      const nova = new TrustedNovaPool(service, fast).forTrust(trust.id);
      const group = await nova.createServerGroup('trusted', 'anti-affinity');
      const server = await nova.createServer({ name: 'trusted-vm', imageRef: IMAGE, flavorRef: '1', networks: 'none', schedulerHints: { group: group.id } });
      expect(await owner(`/os-server-groups/${group.id}`)).toEqual({ project: ids.altProject, user: ids.altDemo });
      expect(await owner(`/servers/${server.id}`)).toEqual({ project: ids.altProject, user: ids.altDemo });
      expect((await nova.listServers()).map((s) => s.id)).toEqual([server.id]);

      const forced = nova.createServer({ name: 'forced', imageRef: IMAGE, flavorRef: '1', networks: 'none', availabilityZone: 'az1:host-1' });
      await expect(forced).rejects.toBeInstanceOf(NovaForbiddenError);
      await expect(forced).rejects.toMatchObject({ status: 403, serviceMessage: "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed." });
    });

    it('fails with TrustError once the trust is deleted and its token no longer works', async () => {
      const trust = await altTrust();
      const nova = new TrustedNovaPool(service, fast).forTrust(trust.id);
      await nova.listServers();
      await trusts.delete(altToken, trust.id);
      const after = nova.listServers();
      await expect(after).rejects.toBeInstanceOf(TrustError);
      const error: TrustError = await after.catch((e) => e);
      expect(error).toMatchObject({ trustId: trust.id, status: 401, permanent: true, transient: false });
      expect(error.message).toContain(trust.id);
      expect(error.message).toContain('The request you have made requires authentication.');
    });

    it('fails with TrustError (403) when the service user is not the trustee', async () => {
      const res = await fetch(`${sim.authUrl}/OS-TRUST/trusts`, {
        method: 'POST',
        headers: { 'X-Auth-Token': altToken, 'Content-Type': 'application/json' },
        body: JSON.stringify({ trust: { trustor_user_id: ids.altDemo, trustee_user_id: ids.demo, project_id: ids.altProject, impersonation: true, roles: [{ name: 'member' }] } }),
      });
      const forDemo = ((await res.json()) as { trust: { id: string } }).trust.id;
      const error = await new TrustedNovaPool(service, fast)
        .forTrust(forDemo)
        .createServerGroup('x', 'affinity')
        .catch((e) => e);
      expect(error).toBeInstanceOf(TrustError);
      expect(error).toMatchObject({ trustId: forDemo, status: 403, keystoneMessage: 'You are not authorized to perform the requested action.' });
    });

    it('fails with TrustError (401) for a trust Keystone does not know', async () => {
      const error = await new TrustedNovaPool(service, fast).forTrust('0'.repeat(32)).listServers().catch((e) => e);
      expect(error).toBeInstanceOf(TrustError);
      expect(error.status).toBe(401);
    });

    it('keeps a Keystone outage a transient NovaError, not a TrustError', async () => {
      const trust = await altTrust();
      const fault = await fetch(`${sim.url}/_sim/faults`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ method: 'POST', path: '^/identity/v3/auth/tokens$', status: 503, times: 2 }),
      });
      expect(fault.ok).toBe(true);
      const error = await new TrustedNovaPool(service, fast).forTrust(trust.id).listServers().catch((e) => e);
      expect(error).toBeInstanceOf(NovaError);
      expect(error).not.toBeInstanceOf(TrustError);
      expect(error).toMatchObject({ status: 503, transient: true });
    });

    it('keeps at most maxClients clients, dropping the least recently used, and forgets an evicted trust', () => {
      const pool = new TrustedNovaPool(service, { maxClients: 2 });
      const a = pool.forTrust('a');
      const b = pool.forTrust('b');
      expect(pool.forTrust('a')).toBe(a);
      pool.forTrust('c');
      expect(pool.size).toBe(2);
      expect(pool.forTrust('a')).toBe(a);
      expect(pool.forTrust('b')).not.toBe(b);
      expect(pool.size).toBe(2);
      pool.evict('b');
      expect(pool.size).toBe(1);
      expect(pool.forTrust('a')).toBe(a);
    });

    it('sends password auth scoped to the trust instead of the project', () => {
      const body = authRequestBody({ ...(resolveCredentials(service) as Extract<ReturnType<typeof resolveCredentials>, { method: 'password' }>), trustId: 't1' });
      expect(body).toEqual({
        auth: {
          identity: { methods: ['password'], password: { user: { name: 'trellis', domain: { name: 'Default' }, password: 'service-secret' } } },
          scope: { 'OS-TRUST:trust': { id: 't1' } },
        },
      });
    });

    it('refuses a service user with an application credential: Keystone lets none use a trust', () => {
      const appCred = settings(sim, { applicationCredentialId: 'abc', applicationCredentialSecret: 's' });
      expect(() => new TrustedNovaPool(appCred)).toThrow(ConfigError);
      expect(() => new TrustedNovaPool(appCred)).toThrow(/password auth \(OS_USERNAME\/OS_PASSWORD\)/);
    });
  });
});
