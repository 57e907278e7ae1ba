import { createHash, randomUUID } from 'node:crypto';
import { loadConfig, type OpenStackSettings } from '@trellis/common';
import { TRELLIS_CLUSTER_KEY, createNovaClient, type NovaPort, type Server } from '@trellis/nova';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from './api-client';
import { act, antiAffinitySpec, createPolicy } from './placement.scenario';
import { nodesOf } from './scale-out.scenario';

/**
 * Issue 17: Trellis acts in Nova as the project that asked, never as itself. Written once and run
 * against the real Keystone + Nova of ../shared/openstack (test/openstack/acting-as-project.os-spec.ts)
 * and against the simulator on RabbitMQ + PostgreSQL (test/integration/acting-as-project.int-spec.ts).
 * Trellis runs with the cloud's `trellis` service user, as a deployment would; the test talks to
 * Trellis as the cloud's users and looks at the result in Nova as those users.
 */

/** The users of the harness: two members of two projects, a reader, a cloud admin, and Trellis itself. */
export type ProjectUser = 'admin' | 'demo' | 'alt' | 'viewer' | 'trellis';

export interface TenancyCloud {
  label: string;
  settings(user: ProjectUser): OpenStackSettings;
  image: string;
  flavor: string;
  /** zone → its hosts; the first host of the first zone is the one forced */
  hostsByZone: Record<string, string[]>;
  /** every hypervisor_hostname that differs from its service host (a DRS-like node) */
  nodeNames: string[];
  actionTimeoutMs: number;
  pollIntervalMs: number;
  /** the environment for Trellis: a database and bus of its own (integration) or none (PGlite in memory) */
  trellisEnv?(): Promise<{ env: Record<string, string>; drop(): Promise<void> }>;
  /** deletes what a run named with prefix left, in every project */
  cleanup(prefix: string): Promise<unknown>;
}

const sha224 = (text: string) => createHash('sha224').update(text).digest('hex');

function profileSpec(cloud: TenancyCloud, serverName: string, extra: Record<string, unknown> = {}) {
  return { type: 'os.nova.server', version: 1.0, properties: { name: serverName, flavor: cloud.flavor, image: cloud.image, networks: [], ...extra } };
}

async function apiAs(cloud: TenancyCloud, trellis: Embedded, user: ProjectUser): Promise<ApiClient> {
  const s = cloud.settings(user);
  return new ApiClient(trellis.url, await keystoneToken(s.authUrl!, { name: s.username!, password: s.password!, project: s.projectName! }));
}

async function tokenBody(cloud: TenancyCloud, user: ProjectUser): Promise<{ token: string; userId: string; projectId: string }> {
  const s = cloud.settings(user);
  const token = await keystoneToken(s.authUrl!, { name: s.username!, password: s.password!, project: s.projectName! });
  const res = await fetch(`${s.authUrl}/auth/tokens`, { headers: { 'X-Auth-Token': token, 'X-Subject-Token': token } });
  const body = (await res.json()) as { token: { user: { id: string }; project: { id: string } } };
  return { token, userId: body.token.user.id, projectId: body.token.project.id };
}

async function createCluster(api: ApiClient, name: string, spec: Record<string, unknown>, desired: number, timeoutMs: number) {
  const profile = await api.post('/v1/profiles', { profile: { name: `${name}-profile`, spec } });
  if (profile.status !== 201) throw new Error(`profile create: ${profile.status} ${JSON.stringify(profile.body)}`);
  const cluster = await api.post('/v1/clusters', {
    cluster: { name, profile_id: profile.body.profile.id, desired_capacity: desired, min_size: 0, max_size: -1 },
  });
  if (cluster.status !== 202) throw new Error(`cluster create: ${cluster.status} ${JSON.stringify(cluster.body)}`);
  const action = await api.waitForAction(ApiClient.actionIdOf(cluster), timeoutMs);
  return { clusterId: cluster.body.cluster.id as string, action };
}

async function serversOf(nova: NovaPort, clusterId: string): Promise<Server[]> {
  return (await nova.listServers({ metadata: { [TRELLIS_CLUSTER_KEY]: clusterId } })).filter((s) => s.status !== 'DELETED');
}

const FORCED_HOST_REFUSED = "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.";

export function describeActingAsProject(options: { title: string; prefix: string; testTimeoutMs: number; cloud(): Promise<TenancyCloud> }): void {
  describe(options.title, () => {
    const run = `${options.prefix}${randomUUID().slice(0, 8)}`;
    const timeout = options.testTimeoutMs;
    let cloud: TenancyCloud;
    let trellis: Embedded;
    let dropEnv: (() => Promise<void>) | null = null;
    const nova = {} as Record<ProjectUser, NovaPort>;
    const api = {} as Record<ProjectUser, ApiClient>;

    beforeAll(async () => {
      cloud = await options.cloud();
      await cloud.cleanup(options.prefix);
      const extra = cloud.trellisEnv ? await cloud.trellisEnv() : { env: {}, drop: async () => undefined };
      dropEnv = extra.drop;
      const service = cloud.settings('trellis');
      const config = loadConfig({
        TRELLIS_PORT: '0',
        TRELLIS_DATA_DIR: ':memory:',
        TRELLIS_POLL_INTERVAL_MS: String(cloud.pollIntervalMs),
        TRELLIS_FACTS_REFRESH_SECONDS: '2',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
        OS_AUTH_URL: service.authUrl!,
        ...extra.env,
      });
      trellis = await startEmbedded({ ...config, openstack: service });
      if (trellis.simulator) throw new Error(`Trellis started its own simulator instead of using the ${cloud.label}`);
      for (const user of ['admin', 'demo', 'alt', 'viewer', 'trellis'] as const) {
        nova[user] = createNovaClient(cloud.settings(user));
        if (user !== 'trellis') api[user] = await apiAs(cloud, trellis, user);
      }
    }, timeout);

    afterAll(async () => {
      try {
        await trellis?.close();
        if (cloud) await cloud.cleanup(run);
      } finally {
        await dropEnv?.();
      }
    }, timeout);

    it("a member's cluster: its servers and server group are in the member's project, none in Trellis's", async () => {
      const prefix = `${run}-own`;
      await createPolicy(api.alt, `${prefix}-apart`, antiAffinitySpec(`${prefix}-apart`));
      const { clusterId, action } = await createCluster(api.alt, `${prefix}`, profileSpec(cloud, prefix), 0, cloud.actionTimeoutMs);
      expect(action.status).toBe('SUCCEEDED');
      expect(await act(api.alt, clusterId, { policy_attach: { policy_id: `${prefix}-apart` } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
      expect(await act(api.alt, clusterId, { scale_out: { count: 2 } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });

      const nodes = await nodesOf(api.alt, clusterId);
      const servers = await serversOf(nova.alt, clusterId);
      expect(servers.map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());
      const groups = (await nova.alt.listServerGroups()).filter((g) => g.name === `${prefix}-apart`);
      expect(groups).toHaveLength(1);
      expect(groups[0].members.sort()).toEqual(servers.map((s) => s.id).sort());
      // Trellis's own project holds nothing of it
      expect(await serversOf(nova.trellis, clusterId)).toEqual([]);
      expect((await nova.trellis.listServerGroups()).filter((g) => g.name.startsWith(prefix))).toEqual([]);
      // and another member's project neither
      expect(await serversOf(nova.demo, clusterId)).toEqual([]);
    }, timeout);

    it("a member's forced host is refused by Nova and the action fails at once with Nova's reason; an admin's is honoured", async () => {
      const prefix = `${run}-force`;
      const [zone, hosts] = Object.entries(cloud.hostsByZone)[0];
      const forced = `${zone}:${hosts[0]}`;
      const started = Date.now();
      const member = await createCluster(api.alt, `${prefix}-m`, profileSpec(cloud, `${prefix}-m`, { availability_zone: forced }), 1, cloud.actionTimeoutMs);
      expect(member.action.status).toBe('FAILED');
      expect(member.action.status_reason).toContain(FORCED_HOST_REFUSED);
      // refused, not retried: well within one build's polling, nowhere near the action's timeout
      expect(Date.now() - started).toBeLessThan(cloud.actionTimeoutMs / 2);
      const [node] = await nodesOf(api.alt, member.clusterId);
      expect(node).toMatchObject({ status: 'ERROR', physical_id: null });
      expect(node.status_reason).toContain(FORCED_HOST_REFUSED);
      expect(await serversOf(nova.alt, member.clusterId)).toEqual([]);

      const admin = await createCluster(api.admin, `${prefix}-a`, profileSpec(cloud, `${prefix}-a`, { availability_zone: forced }), 2, cloud.actionTimeoutMs);
      expect(admin.action.status).toBe('SUCCEEDED');
      const nodes = await nodesOf(api.admin, admin.clusterId);
      expect(nodes.map((n) => [n.status, n.data.placement.zone, n.data.placement.host])).toEqual([
        ['ACTIVE', zone, hosts[0]],
        ['ACTIVE', zone, hosts[0]],
      ]);
      const servers = await Promise.all(nodes.map((n) => nova.admin.getServer(n.physical_id)));
      expect(servers.map((s) => s?.host)).toEqual([hosts[0], hosts[0]]);
    }, timeout);

    it("a member's dry-run and decisions show its own project's world: no other project's group, no host or hypervisor name", async () => {
      const prefix = `${run}-see`;
      const secret = `${prefix}-alt-secret-group`;
      await createPolicy(api.alt, secret, antiAffinitySpec(secret));
      const altCluster = await createCluster(api.alt, `${prefix}-alt`, profileSpec(cloud, `${prefix}-alt`), 0, cloud.actionTimeoutMs);
      expect(await act(api.alt, altCluster.clusterId, { policy_attach: { policy_id: secret } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
      expect(await act(api.alt, altCluster.clusterId, { scale_out: { count: 1 } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
      const altGroup = (await nova.alt.listServerGroups()).find((g) => g.name === secret)!;
      expect(altGroup).toBeDefined();

      await createPolicy(api.demo, `${prefix}-demo-apart`, antiAffinitySpec(`${prefix}-demo-apart`));
      const demoCluster = await createCluster(api.demo, `${prefix}-demo`, profileSpec(cloud, `${prefix}-demo`), 0, cloud.actionTimeoutMs);
      expect(await act(api.demo, demoCluster.clusterId, { policy_attach: { policy_id: `${prefix}-demo-apart` } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
      const scaled = await act(api.demo, demoCluster.clusterId, { scale_out: { count: 2 } }, cloud.actionTimeoutMs);
      expect(scaled.status).toBe('SUCCEEDED');

      // a scale-in by 2 lists both nodes in its (summarised) snapshot; a scale-out lists none (issue 15)
      const dryRun = await api.demo.post(`/v1/clusters/${demoCluster.clusterId}/actions?dry_run=true`, { scale_in: { count: 2 } });
      expect(dryRun.status).toBe(200);
      const decision = await api.demo.get(`/v1/actions/${scaled.id}/decision`);
      expect(decision.status).toBe(200);
      const demoProject = (await tokenBody(cloud, 'demo')).projectId;
      const hosts = Object.values(cloud.hostsByZone).flat();
      for (const [what, body] of [['dry-run', dryRun.body], ['decision', decision.body]] as const) {
        const text = JSON.stringify(body);
        expect({ what, leaks: [secret, altGroup.id].filter((s) => text.includes(s)) }).toEqual({ what, leaks: [] });
        expect({ what, names: [...hosts, ...cloud.nodeNames].filter((h) => text.includes(`"${h}"`) || text.includes(`${h}:`)) }).toEqual({ what, names: [] });
      }
      // the placements stay readable: each node's host is Nova's hostId of the demo project
      const hostIds = new Set(hosts.map((h) => sha224(demoProject + h)));
      const nodes: Array<{ server: { host: string | null } }> = dryRun.body.decision.input.cluster.nodes;
      expect(nodes.length).toBe(2);
      for (const n of nodes) expect(hostIds.has(n.server.host!)).toBe(true);
      // demo's project admin (the cloud's admin has the admin role on demo too) sees the names
      const a = cloud.settings('admin');
      const projectAdmin = new ApiClient(trellis.url, await keystoneToken(a.authUrl!, { name: a.username!, password: a.password!, project: cloud.settings('demo').projectName! }));
      // (the scale-out's decision names no host: it lists no node, and no policy of it reads the
      // hypervisors, so its snapshot carries none; the scale-in's dry run lists both nodes)
      const asAdmin = await projectAdmin.post(`/v1/clusters/${demoCluster.clusterId}/actions?dry_run=true`, { scale_in: { count: 2 } });
      expect(asAdmin.status).toBe(200);
      const named: Array<{ server: { host: string | null } }> = asAdmin.body.decision.input.cluster.nodes;
      expect(named.map((n) => hosts.includes(n.server.host!))).toEqual([true, true]);
      expect(JSON.stringify(asAdmin.body)).not.toContain(secret);
      const adminDecision = await projectAdmin.get(`/v1/actions/${scaled.id}/decision`);
      expect(adminDecision.status).toBe(200);
      expect(JSON.stringify(adminDecision.body)).not.toContain(secret);
    }, timeout);

    it('a reader gets 403 on every write and 200 on reads', async () => {
      const prefix = `${run}-read`;
      const { clusterId } = await createCluster(api.demo, `${prefix}`, profileSpec(cloud, prefix), 0, cloud.actionTimeoutMs);
      for (const path of ['/v1/clusters', `/v1/clusters/${clusterId}`, '/v1/profiles', '/v1/policies', '/v1/nodes', '/v1/actions', '/v1/events']) {
        expect({ path, status: (await api.viewer.get(path)).status }).toEqual({ path, status: 200 });
      }
      const writes: Array<[string, string, unknown]> = [
        ['POST', '/v1/profiles', { profile: { name: `${prefix}-p2`, spec: profileSpec(cloud, `${prefix}-p2`) } }],
        ['POST', '/v1/clusters', { cluster: { name: `${prefix}-c2`, profile_id: `${prefix}-profile`, desired_capacity: 0 } }],
        ['PATCH', `/v1/clusters/${clusterId}`, { cluster: { name: `${prefix}-renamed` } }],
        ['POST', `/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }],
        ['DELETE', `/v1/clusters/${clusterId}`, undefined],
        ['POST', '/v1/policies', { policy: { name: `${prefix}-pol`, spec: antiAffinitySpec(`${prefix}-pol`) } }],
      ];
      for (const [method, path, body] of writes) {
        const res = await api.viewer.call(method, path, body);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(res.body.error).toMatchObject({ code: 403 });
      }
      expect((await api.demo.get(`/v1/clusters/${clusterId}`)).body.cluster.name).toBe(prefix);
    }, timeout);

    it('two projects that name a server group alike keep their own groups through attach and detach', async () => {
      const prefix = `${run}-same`;
      const group = `${prefix}-group`;
      const ids: Record<'demo' | 'alt', string> = { demo: '', alt: '' };
      const clusters: Record<'demo' | 'alt', string> = { demo: '', alt: '' };
      for (const user of ['demo', 'alt'] as const) {
        await createPolicy(api[user], `${prefix}-pol`, antiAffinitySpec(group));
        const { clusterId } = await createCluster(api[user], `${prefix}-${user}`, profileSpec(cloud, `${prefix}-${user}`), 0, cloud.actionTimeoutMs);
        clusters[user] = clusterId;
        expect(await act(api[user], clusterId, { policy_attach: { policy_id: `${prefix}-pol` } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
        expect(await act(api[user], clusterId, { scale_out: { count: 1 } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
        const binding = (await api[user].get(`/v1/clusters/${clusterId}/policies`)).body.cluster_policies[0];
        ids[user] = binding.data.AffinityPolicy.data.servergroup_id;
      }
      expect(ids.demo).not.toBe(ids.alt);
      for (const user of ['demo', 'alt'] as const) {
        const named = (await nova[user].listServerGroups()).filter((g) => g.name === group);
        expect(named.map((g) => g.id)).toEqual([ids[user]]);
      }
      expect(await act(api.alt, clusters.alt, { policy_detach: { policy_id: `${prefix}-pol` } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
      expect((await nova.alt.listServerGroups()).filter((g) => g.name === group)).toEqual([]);
      expect((await nova.demo.listServerGroups()).filter((g) => g.name === group).map((g) => g.id)).toEqual([ids.demo]);
      expect(await nova.demo.getServerGroup(ids.demo)).toMatchObject({ id: ids.demo });
    }, timeout);

    it("a revoked trust fails the next action at once, naming the user and project; the user's next action makes a new trust", async () => {
      const prefix = `${run}-revoke`;
      const { clusterId } = await createCluster(api.demo, prefix, profileSpec(cloud, prefix), 0, cloud.actionTimeoutMs);
      expect(await act(api.demo, clusterId, { scale_out: { count: 1 } }, cloud.actionTimeoutMs)).toMatchObject({ status: 'SUCCEEDED' });

      // the user revokes what they delegated to Trellis, in Keystone (only that: on a shared cloud
      // the user's trusts to other services, Senlin's say, are none of this test's business)
      const me = await tokenBody(cloud, 'demo');
      const trellisUser = (await tokenBody(cloud, 'trellis')).userId;
      const authUrl = cloud.settings('demo').authUrl!;
      type TrustRow = { id: string; project_id: string; trustee_user_id: string };
      const toTrellis = async (): Promise<TrustRow[]> => {
        const listed = await fetch(`${authUrl}/OS-TRUST/trusts?trustor_user_id=${me.userId}`, { headers: { 'X-Auth-Token': me.token } });
        expect(listed.status).toBe(200);
        return ((await listed.json()) as { trusts: TrustRow[] }).trusts.filter((t) => t.project_id === me.projectId && t.trustee_user_id === trellisUser);
      };
      const trusts = await toTrellis();
      expect(trusts.length).toBeGreaterThan(0);
      for (const t of trusts) {
        const res = await fetch(`${authUrl}/OS-TRUST/trusts/${t.id}`, { method: 'DELETE', headers: { 'X-Auth-Token': me.token } });
        expect(res.status).toBe(204);
      }

      const started = Date.now();
      const failed = await act(api.demo, clusterId, { scale_out: { count: 1 } }, cloud.actionTimeoutMs);
      expect(failed.status).toBe('FAILED');
      expect(failed.status_reason).toContain(`from user ${me.userId} to Trellis in project ${me.projectId}`);
      expect(Date.now() - started).toBeLessThan(cloud.actionTimeoutMs / 2);

      const again = await act(api.demo, clusterId, { scale_out: { count: 1 } }, cloud.actionTimeoutMs);
      expect(again.status).toBe('SUCCEEDED');
      const after = await toTrellis();
      expect(after.length).toBe(1);
      expect(trusts.map((t) => t.id)).not.toContain(after[0].id);
    }, timeout);
  });
}
