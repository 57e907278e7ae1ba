import { randomUUID } from 'node:crypto';
import type { OpenStackSettings } from '@trellis/common';
import { KeystoneSession, createKeystoneTrusts, resolveCredentials, type KeystoneTrusts } from '@trellis/identity';
import { NovaForbiddenError, TrustError, TrustedNovaPool } from '@trellis/nova';
import { DEFAULT_RETRY, HttpTransport, defaultRuntime } from '../../libs/identity/src/keystone/http-transport';
import { REAL_CLOUD, assertRealCloudAnswers, realCloudSettings } from './support/real-cloud';

/**
 * Trellis acting in Nova as the user who asked, on the real cloud: alt_demo (member of `alt`) lends
 * `member` to the service user `trellis` (../shared/openstack README, "Keystone trusts on this cloud").
 */

const run = `os-trust-${randomUUID().slice(0, 8)}`;

function userSettings(username: string, password: string, projectName: string): OpenStackSettings {
  return { ...realCloudSettings('demo'), username, password, projectName };
}

function sessionOf(settings: OpenStackSettings): KeystoneSession {
  const runtime = defaultRuntime();
  return new KeystoneSession(resolveCredentials(settings), new HttpTransport(runtime, DEFAULT_RETRY, 30_000), runtime, { renewMarginMs: 300_000 });
}

describe('Keystone trusts on the real cloud', () => {
  const service = userSettings('trellis', process.env.SERVICE_PASS || 'service-secret', 'service');
  const alt = userSettings('alt_demo', process.env.DEMO_PASS || 'demo', 'alt');
  let trusts: KeystoneTrusts;
  let altSession: KeystoneSession;
  let altToken: string;
  let trustor: { userId: string; projectId: string };
  const newTrust = () => trusts.create(altToken, { trustorUserId: trustor.userId, projectId: trustor.projectId, roles: ['member'] });

  beforeAll(async () => {
    await assertRealCloudAnswers();
    trusts = createKeystoneTrusts(service);
    altSession = sessionOf(alt);
    const token = await altSession.token();
    altToken = token.value;
    trustor = { userId: token.userId!, projectId: token.projectId! };
  });

  it("creates servers and groups in the trustor's project as the trustor; a forced host is refused", async () => {
    const trust = await newTrust();
    const nova = new TrustedNovaPool(service).forTrust(trust.id);
    const servers: string[] = [];
    const groups: string[] = [];
    try {
      expect(trust).toMatchObject({ trustorUserId: trustor.userId, trusteeUserId: await trusts.serviceUserId(), projectId: trustor.projectId, roles: ['member'], impersonation: true });
      expect(await trusts.get(trust.id)).toEqual(trust);
      const group = await nova.createServerGroup(`${run}-group`, 'anti-affinity');
      groups.push(group.id);
      const server = await nova.createServer({ name: `${run}-vm`, imageRef: REAL_CLOUD.image, flavorRef: REAL_CLOUD.flavor, networks: 'none', schedulerHints: { group: group.id } });
      servers.push(server.id);

      // the trustor's own token shows them: in its project, made by it
      const shown = await altSession.request({ service: 'compute', operation: 'servers.get', method: 'GET', url: `${await altSession.endpoint('compute')}/servers/${server.id}`, idempotent: true });
      const body = (shown.body as { server: { tenant_id: string; user_id: string } }).server;
      expect({ project: body.tenant_id, user: body.user_id }).toEqual({ project: trustor.projectId, user: trustor.userId });

      const forced = nova.createServer({ name: `${run}-forced`, imageRef: REAL_CLOUD.image, flavorRef: REAL_CLOUD.flavor, networks: 'none', availabilityZone: `az1:${REAL_CLOUD.hostsByZone.az1[0]}` });
      await expect(forced).rejects.toBeInstanceOf(NovaForbiddenError);
      await expect(forced).rejects.toMatchObject({ serviceMessage: expect.stringContaining('os_compute_api:servers:create:forced_host') });
    } finally {
      for (const id of servers) await nova.deleteServer(id);
      for (const id of groups) await nova.deleteServerGroup(id);
      await trusts.delete(altToken, trust.id);
    }
    expect(await trusts.get(trust.id)).toBeNull();
  });

  it('throws TrustError for a deleted trust once its client authenticates again', async () => {
    const trust = await newTrust();
    const pool = new TrustedNovaPool(service);
    await pool.forTrust(trust.id).listServers();
    await trusts.delete(altToken, trust.id);
    // Nova's keystonemiddleware may accept the cached token a while longer; a new session gets none
    pool.evict(trust.id);
    const error = await pool.forTrust(trust.id).listServers().catch((e) => e);
    expect(error).toBeInstanceOf(TrustError);
    expect(error).toMatchObject({ trustId: trust.id, status: 401 });
  });

  it('throws TrustError (403) when the service user is not the trustee', async () => {
    const demoId = (await sessionOf(userSettings('demo', process.env.DEMO_PASS || 'demo', 'demo')).token()).userId!;
    const created = await altSession.transport.send({
      service: 'identity',
      operation: 'trusts.create',
      method: 'POST',
      url: `${service.authUrl}/OS-TRUST/trusts`,
      headers: { 'X-Auth-Token': altToken },
      body: { trust: { trustor_user_id: trustor.userId, trustee_user_id: demoId, project_id: trustor.projectId, impersonation: true, roles: [{ name: 'member' }] } },
      idempotent: false,
    });
    const id = (created.body as { trust: { id: string } }).trust.id;
    try {
      const error = await new TrustedNovaPool(service).forTrust(id).listServers().catch((e) => e);
      expect(error).toBeInstanceOf(TrustError);
      expect(error).toMatchObject({ status: 403, keystoneMessage: 'You are not authorized to perform the requested action.' });
    } finally {
      await trusts.delete(altToken, id);
    }
  });
});
