import { randomUUID } from 'node:crypto';
import { loadConfig, type OpenStackSettings } from '@trellis/common';
import { CloudFactKinds } from '@trellis/contracts';
import { TRELLIS_CLUSTER_KEY, createNovaClient, type NovaPort, type Server } from '@trellis/nova';
import { buildPollLookups } from '@trellis/observability';
import { metricValue } from '@trellis/observability/testing';
import { LIST_FROM } from '../../apps/nova-worker/src/builds/build-poller';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken, memberHostId } from './api-client';
import { act, antiAffinitySpec, createPolicy, zoneSpec } from './placement.scenario';
import { nodesOf } from './scale-out.scenario';

/**
 * Issue 5 §7: the placement scenarios written once, run against the real Keystone + Nova of
 * ../shared/openstack (test/openstack/scenarios.os-spec.ts) and against the Nova simulator with
 * the same topology (test/e2e/openstack-scenarios.e2e-spec.ts). Trellis runs embedded and talks
 * to the cloud through OS_* settings in both cases, exactly as a deployment would; the test talks
 * to Trellis's REST API as the cloud's demo user and checks the result in Nova as admin.
 */

/** admin and demo as before; trellis is Trellis's service user (the trustee), viewer a reader of demo */
export type CloudUser = 'admin' | 'demo' | 'trellis' | 'viewer';

/** A cloud shaped like the harness: two zones of two hosts, one host whose node is DRS-like. */
export interface ScenarioCloud {
  /** 'real cloud' or 'simulator', for messages */
  label: string;
  settings(user: CloudUser): OpenStackSettings;
  image: string;
  flavor: string;
  hostsByZone: Record<'az1' | 'az2', [string, string]>;
  drs: { zone: 'az2'; host: string; hypervisor: string };
  /** deletes every server and server group whose name starts with prefix, in both projects */
  cleanup(prefix: string): Promise<unknown>;
  /** how long one action may take: real builds and deletes take seconds on a loaded machine */
  actionTimeoutMs: number;
  /** how often the worker's build poller looks at Nova (TRELLIS_POLL_INTERVAL_MS) */
  pollIntervalMs: number;
}

/** The simulator topology that mirrors the harness (test/openstack/README.md, item 9). */
export const HARNESS_TOPOLOGY = {
  zones: [
    { name: 'az1', hosts: [{ name: 'fake-host-1' }, { name: 'fake-host-2' }] },
    { name: 'az2', hosts: [{ name: 'fake-host-3' }, { name: 'fake-host-4', hypervisor_hostname: 'fake-drs-cluster-4' }] },
  ],
};

export interface TrellisOnCloud {
  trellis: Embedded;
  /** the REST API as the cloud's demo user */
  api: ApiClient;
  /** the REST API as the cloud's admin (the only user Nova lets force a host) */
  adminApi: ApiClient;
  /**
   * Nova as the demo user: Trellis acts with the demo user's trust, so the servers and groups it
   * makes for demo are in demo's project (issue 17)
   */
  nova: NovaPort;
  /** Nova as the cloud's admin: what a member may not see (the host of a server) */
  adminNova: NovaPort;
  close(): Promise<void>;
}

/**
 * Trellis embedded, with PGlite in memory, on the given cloud: its nova-worker and its token
 * validation use `serviceUser`'s credentials, as OS_* variables would set them; `serviceUser` is
 * the trustee of the users' trusts.
 */
export async function startTrellisOn(cloud: ScenarioCloud, serviceUser: CloudUser): Promise<TrellisOnCloud> {
  const openstack = cloud.settings(serviceUser);
  const config = loadConfig({
    TRELLIS_PORT: '0',
    TRELLIS_DATA_DIR: ':memory:',
    TRELLIS_POLL_INTERVAL_MS: String(cloud.pollIntervalMs),
    // the inherited-group scenario creates a group behind Trellis's back and waits for the facts
    TRELLIS_FACTS_REFRESH_SECONDS: '2',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    ...(openstack.authUrl ? { OS_AUTH_URL: openstack.authUrl } : {}),
    ...(openstack.cloud ? { OS_CLOUD: openstack.cloud } : {}),
  });
  const trellis = await startEmbedded({ ...config, openstack });
  try {
    if (trellis.simulator) throw new Error(`Trellis started its own simulator instead of using the ${cloud.label}`);
    const tokenOf = (s: OpenStackSettings) => keystoneToken(s.authUrl!, { name: s.username!, password: s.password!, project: s.projectName! });
    return {
      trellis,
      api: new ApiClient(trellis.url, await tokenOf(cloud.settings('demo'))),
      adminApi: new ApiClient(trellis.url, await tokenOf(cloud.settings('admin'))),
      nova: createNovaClient(cloud.settings('demo')),
      adminNova: createNovaClient(cloud.settings('admin')),
      close: () => trellis.close(),
    };
  } catch (e) {
    await trellis.close();
    throw e;
  }
}

function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

function profileSpec(cloud: ScenarioCloud, serverName: string, extra: Record<string, unknown> = {}) {
  // every server is named with the run's prefix, so that cleanup finds it whatever happened
  return { type: 'os.nova.server', version: 1.0, properties: { name: serverName, flavor: cloud.flavor, image: cloud.image, networks: [], ...extra } };
}

async function createCluster(api: ApiClient, name: string, spec: Record<string, unknown>): Promise<string> {
  const profile = await api.post('/v1/profiles', { profile: { name: `${name}-profile`, spec } });
  if (profile.status !== 201) throw new Error(`profile create: ${profile.status} ${JSON.stringify(profile.body)}`);
  const cluster = await api.post('/v1/clusters', {
    cluster: { name, profile_id: profile.body.profile.id, desired_capacity: 0, min_size: 0, max_size: -1 },
  });
  if (cluster.status !== 202) throw new Error(`cluster create: ${cluster.status} ${JSON.stringify(cluster.body)}`);
  const created = await api.waitForAction(ApiClient.actionIdOf(cluster));
  if (created.status !== 'SUCCEEDED') throw new Error(`cluster create action: ${JSON.stringify(created)}`);
  return cluster.body.cluster.id;
}

async function bindingOf(api: ApiClient, clusterId: string, policyName: string): Promise<Record<string, any> | undefined> {
  const res = await api.get(`/v1/clusters/${clusterId}/policies`);
  if (res.status !== 200) throw new Error(`cluster policies: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.cluster_policies.find((b: { policy_name: string }) => b.policy_name === policyName);
}

async function serversOf(nova: NovaPort, clusterId: string): Promise<Server[]> {
  return (await nova.listServers({ metadata: { [TRELLIS_CLUSTER_KEY]: clusterId } })).filter((s) => s.status !== 'DELETED');
}

async function members(nova: NovaPort, groupId: string): Promise<string[]> {
  const group = await nova.getServerGroup(groupId);
  if (!group) throw new Error(`server group ${groupId} is not in Nova`);
  return group.members;
}

/** Concurrent boots into a full anti-affinity group fail with either fault on real Nova (README item 2). */
const PLACEMENT_FAULT = /No valid host was found|Exceeded maximum number of retries/;

/**
 * Anti-affinity + zones weighted 100/200 on 2 + 2 hosts: scale out 3 → 1 in az1 and 2 in az2 on
 * 3 hosts, all in the policy's group; scale in 1 → the az1 node goes (weights 1/3 : 2/3 of 2
 * nodes); scale out 3 more → 5 anti-affine servers on 4 hosts: FAILED with Nova's own fault.
 */
export async function antiAffinityWithZonesScenario(cloud: ScenarioCloud, on: TrellisOnCloud, prefix: string): Promise<void> {
  const { api, nova, adminNova } = on;
  const timeout = cloud.actionTimeoutMs;
  const clusterId = await createCluster(api, `${prefix}-spread`, profileSpec(cloud, `${prefix}-spread`));
  await createPolicy(api, `${prefix}-zones`, zoneSpec);
  await createPolicy(api, `${prefix}-apart`, antiAffinitySpec(`${prefix}-apart`));
  expect(await act(api, clusterId, { policy_attach: { policy_id: `${prefix}-zones` } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });
  expect(await act(api, clusterId, { policy_attach: { policy_id: `${prefix}-apart` } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });

  const binding = await bindingOf(api, clusterId, `${prefix}-apart`);
  const groupId = binding?.data.AffinityPolicy.data.servergroup_id as string;
  expect(binding?.data.AffinityPolicy.data.inherited_group).toBe(false);
  expect(await nova.getServerGroup(groupId)).toMatchObject({ id: groupId, name: `${prefix}-apart`, policy: 'anti-affinity' });

  const out = await act(api, clusterId, { scale_out: { count: 3 } }, timeout);
  expect(out).toMatchObject({ status: 'SUCCEEDED' });
  let nodes = await nodesOf(api, clusterId);
  expect(nodes.map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
  expect(countBy(nodes, (n) => n.data.placement.zone)).toEqual({ az1: 1, az2: 2 });
  // the scenario's user is a project member: it sees hosts as its project's hostIds
  const shown = (host: string | null | undefined) => (host ? memberHostId(nodes[0].project, host) : host);
  const hosts = nodes.map((n) => n.data.placement.host as string);
  expect(new Set(hosts).size).toBe(3);
  for (const n of nodes) expect(cloud.hostsByZone[n.data.placement.zone as 'az1' | 'az2'].map(shown)).toContain(n.data.placement.host);
  expect(nodes.every((n) => n.data.placement.servergroup === groupId)).toBe(true);
  // what Nova says, not only what Trellis recorded
  const servers = await serversOf(nova, clusterId);
  expect(servers.map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());
  // a member sees no host names: the cloud admin reads them
  const seenByAdmin = await Promise.all(servers.map((s) => adminNova.getServer(s.id)));
  expect(seenByAdmin.map((s) => shown(s?.host)).sort()).toEqual([...hosts].sort());
  expect(servers.every((s) => s.host === null && typeof s.hostId === 'string' && s.hostId.length === 56)).toBe(true);
  expect(await members(nova, groupId)).toEqual(expect.arrayContaining(servers.map((s) => s.id)));

  const scaleIn = await act(api, clusterId, { scale_in: { count: 1 } }, timeout);
  expect(scaleIn).toMatchObject({ status: 'SUCCEEDED' });
  expect(scaleIn.data.deletion).toMatchObject({ count: 1, zones: { az1: 1 } });
  nodes = await nodesOf(api, clusterId);
  expect(countBy(nodes, (n) => n.data.placement.zone)).toEqual({ az2: 2 });
  expect((await serversOf(nova, clusterId)).map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());

  // 2 + 3 anti-affine servers on 4 hosts: az2's two new ones find no host of their own
  const tooMany = await act(api, clusterId, { scale_out: { count: 3 } }, timeout);
  expect(tooMany.status).toBe('FAILED');
  // real Nova leaves `fault` out of its server list: each failed server is read on its own
  const failed = await Promise.all(
    (await serversOf(nova, clusterId)).filter((s) => s.status === 'ERROR').map(async (s) => (await nova.getServer(s.id)) ?? s),
  );
  expect(failed.length).toBeGreaterThan(0);
  for (const s of failed) expect(s.fault?.message).toMatch(PLACEMENT_FAULT);
  expect(failed.some((s) => tooMany.status_reason.includes(s.fault!.message))).toBe(true);
  nodes = await nodesOf(api, clusterId);
  const byStatus = countBy(nodes, (n) => n.status);
  expect(byStatus).toEqual({ ACTIVE: 5 - failed.length, ERROR: failed.length });
  for (const n of nodes.filter((n) => n.status === 'ERROR')) expect(n.status_reason).toMatch(PLACEMENT_FAULT);

  // with `cleanup_failed_nodes` the next failed scale-out deletes what it created, in Nova too
  // (real Nova keeps a failed build's ERROR status while it deletes it)
  const update = await api.call('PATCH', `/v1/clusters/${clusterId}`, { cluster: { config: { cleanup_failed_nodes: true } } });
  expect(update.status).toBe(202);
  expect((await api.waitForAction(ApiClient.actionIdOf(update), timeout)).status).toBe('SUCCEEDED');
  const before = new Set(nodes.map((n) => n.id));
  // more than the free hosts: some of these fail whatever the zone plan
  const cleaned = await act(api, clusterId, { scale_out: { count: 5 } }, timeout);
  expect(cleaned.status).toBe('FAILED');
  expect(cleaned.status_reason).toMatch(/were deleted/);
  const after = await nodesOf(api, clusterId);
  const added = after.filter((n) => !before.has(n.id));
  expect(added.every((n) => n.status === 'ACTIVE')).toBe(true);
  expect(added.length).toBeLessThan(5);
  const left = await serversOf(nova, clusterId);
  expect(left.map((s) => s.id).sort()).toEqual(after.map((n) => n.physical_id).sort());
}

/**
 * Decision 6: a profile naming an existing server group in `scheduler_hints.group` makes the
 * affinity policy use it (inherited_group), the servers join it, and detach leaves it in Nova.
 */
export async function inheritedGroupScenario(cloud: ScenarioCloud, on: TrellisOnCloud, prefix: string): Promise<void> {
  const { api, nova, adminNova, trellis } = on;
  const timeout = cloud.actionTimeoutMs;
  // made by the demo user in its own project: the only project whose groups demo's decisions see
  const group = await nova.createServerGroup(`${prefix}-inherited`, 'affinity');

  const clusterId = await createCluster(
    api,
    `${prefix}-together`,
    profileSpec(cloud, `${prefix}-together`, { scheduler_hints: { group: group.id } }),
  );
  // the worker reads a project's groups once that project has a cluster and a trust
  await waitForServerGroupFact(trellis, group.id, timeout);
  await createPolicy(api, `${prefix}-together`, { type: 'senlin.policy.affinity', version: 1.0, properties: { servergroup: { policies: 'affinity' } } });
  expect(await act(api, clusterId, { policy_attach: { policy_id: `${prefix}-together` } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });
  const binding = await bindingOf(api, clusterId, `${prefix}-together`);
  expect(binding?.data.AffinityPolicy.data).toEqual({ inherited_group: true, servergroup_id: group.id });

  expect(await act(api, clusterId, { scale_out: { count: 2 } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });
  const nodes = await nodesOf(api, clusterId);
  expect(nodes.map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE']);
  expect(nodes.every((n) => n.data.placement.servergroup === group.id)).toBe(true);
  expect((await members(nova, group.id)).sort()).toEqual(nodes.map((n) => n.physical_id).sort());
  const servers = await serversOf(nova, clusterId);
  expect(servers).toHaveLength(2);
  expect(new Set(servers.map((s) => s.hostId)).size).toBe(1);
  expect(new Set((await Promise.all(servers.map((s) => adminNova.getServer(s.id)))).map((s) => s?.host)).size).toBe(1);

  const detach = await act(api, clusterId, { policy_detach: { policy_id: `${prefix}-together` } }, timeout);
  expect(detach).toMatchObject({ status: 'SUCCEEDED' });
  expect(await bindingOf(api, clusterId, `${prefix}-together`)).toBeUndefined();
  expect(await nova.getServerGroup(group.id)).toMatchObject({ id: group.id, policy: 'affinity' });
}

/**
 * Decision 9: with DRS enabled the affinity policy boots every server onto the DRS node's host. The
 * boot forces a host, which Nova allows an admin only: the cloud admin runs it (issue 17; a
 * member's forced host is refused, test/support/acting-as-project.scenario.ts).
 */
/**
 * A scale-out of LIST_FROM servers and the scale-in of all of them: the build poller follows them
 * with lists of the servers changed since their orders (as demo, through demo's trust), besides a
 * request for any server a list does not show yet; every server ends ACTIVE, then gone.
 */
export async function listedBuildsScenario(cloud: ScenarioCloud, on: TrellisOnCloud, prefix: string): Promise<void> {
  const { api, nova } = on;
  const timeout = cloud.actionTimeoutMs;
  const clusterId = await createCluster(api, `${prefix}-many`, profileSpec(cloud, `${prefix}-many`));
  const listed = async () => metricValue(buildPollLookups, { way: 'list' });
  const before = await listed();

  expect(await act(api, clusterId, { scale_out: { count: LIST_FROM } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });
  const nodes = await nodesOf(api, clusterId);
  expect(nodes.map((n) => n.status)).toEqual(Array(LIST_FROM).fill('ACTIVE'));
  const servers = await serversOf(nova, clusterId);
  expect(servers.map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());
  expect(servers.every((s) => s.status === 'ACTIVE')).toBe(true);
  const afterOut = await listed();
  expect(afterOut - before).toBeGreaterThanOrEqual(LIST_FROM);

  expect(await act(api, clusterId, { scale_in: { count: LIST_FROM } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });
  expect(await nodesOf(api, clusterId)).toEqual([]);
  expect(await serversOf(nova, clusterId)).toEqual([]);
  expect(await listed()).toBeGreaterThan(afterOut);
}

export async function drsPlacementScenario(cloud: ScenarioCloud, on: TrellisOnCloud, prefix: string): Promise<void> {
  const { adminApi: api, adminNova: nova } = on;
  const timeout = cloud.actionTimeoutMs;
  const clusterId = await createCluster(api, `${prefix}-vmware`, profileSpec(cloud, `${prefix}-vmware`));
  await createPolicy(api, `${prefix}-drs`, drsSpec(`${prefix}-drs`));
  expect(await act(api, clusterId, { policy_attach: { policy_id: `${prefix}-drs` } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });

  const out = await act(api, clusterId, { scale_out: { count: 2 } }, timeout);
  expect(out).toMatchObject({ status: 'SUCCEEDED' });
  const nodes = await nodesOf(api, clusterId);
  // the cloud admin sees host names
  const drsHost = cloud.drs.host;
  const forced = `${cloud.drs.zone}:${drsHost}`;
  expect(out.data.placement.placements.map((p: { zone: string }) => p.zone)).toEqual([forced, forced]);
  expect(nodes.map((n) => [n.status, n.data.placement.zone, n.data.placement.host])).toEqual([
    ['ACTIVE', cloud.drs.zone, drsHost],
    ['ACTIVE', cloud.drs.zone, drsHost],
  ]);
  const servers = await serversOf(nova, clusterId);
  expect(servers.map((s) => [s.host, s.hypervisorHostname])).toEqual([
    [cloud.drs.host, cloud.drs.hypervisor],
    [cloud.drs.host, cloud.drs.hypervisor],
  ]);
}

/**
 * The DRS error path: Trellis's service user may not list hypervisors (here a member, which gets
 * 403), so the worker stores the hypervisors fact with its error and no items; the DRS policy then
 * finds no DRS host and the scale-out fails with decision 9's reason, without booting anything.
 */
export async function drsWithoutHypervisorsScenario(cloud: ScenarioCloud, on: TrellisOnCloud, prefix: string): Promise<void> {
  const { api, nova, trellis } = on;
  const timeout = cloud.actionTimeoutMs;
  const fact = await hypervisorsFact(trellis);
  expect(fact).toMatchObject({ items: [] });
  expect(fact.error).toMatch(/403.*os-hypervisors/);

  const clusterId = await createCluster(api, `${prefix}-nodrs`, profileSpec(cloud, `${prefix}-nodrs`));
  const policy = `${prefix}-nodrs`;
  await createPolicy(api, policy, drsSpec(policy));
  expect(await act(api, clusterId, { policy_attach: { policy_id: policy } }, timeout)).toMatchObject({ status: 'SUCCEEDED' });

  const out = await act(api, clusterId, { scale_out: { count: 1 } }, timeout);
  expect(out.status).toBe('FAILED');
  expect(out.status_reason).toBe(`Policy check failure: Failed policy '${policy}': No suitable vSphere host is available.`);
  expect(await nodesOf(api, clusterId)).toEqual([]);
  expect(await serversOf(nova, clusterId)).toEqual([]);
}

const drsSpec = (group: string) => ({
  type: 'senlin.policy.affinity',
  version: 1.0,
  properties: { servergroup: { name: group, policies: 'affinity' }, availability_zone: 'az2', enable_drs_extension: true },
});

async function hypervisorsFact(trellis: Embedded): Promise<{ items: unknown[]; error?: string }> {
  const rows: Array<{ data: { items: unknown[]; error?: string } }> = await trellis.infra.database.dataSource.query(
    `SELECT data FROM cloud_facts WHERE kind = $1 AND project = ''`,
    [CloudFactKinds.hypervisors],
  );
  if (!rows.length) throw new Error('the nova-worker stored no hypervisors fact');
  return rows[0].data;
}

/**
 * Policies decide on the facts the worker last copied from Nova (decision 17), so a group made
 * outside Trellis can be named once the worker's periodic refresh has seen it.
 */
async function waitForServerGroupFact(trellis: Embedded, groupId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows: Array<{ data: { items?: Array<{ id: string }> } }> = await trellis.infra.database.dataSource.query(
      'SELECT data FROM cloud_facts WHERE kind = $1',
      [CloudFactKinds.serverGroups],
    );
    if (rows.some((r) => r.data.items?.some((g) => g.id === groupId))) return;
    if (Date.now() > deadline) throw new Error(`the nova-worker's facts never listed server group ${groupId}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Deletes every server, then every server group, named with prefix, in the projects of the given clients. */
export async function cleanupByPrefix(clients: NovaPort[], prefix: string, timeoutMs = 60_000): Promise<void> {
  if (!prefix) throw new Error('cleanupByPrefix needs a non-empty prefix, so that it never deletes everything');
  for (const nova of clients) {
    const servers = (await nova.listServers()).filter((s) => s.name.startsWith(prefix));
    for (const s of servers) await nova.deleteServer(s.id);
    const deadline = Date.now() + timeoutMs;
    let left = servers.map((s) => s.id);
    while (left.length) {
      left = (await Promise.all(left.map(async (id) => ((await nova.getServer(id)) ? id : null)))).filter((id): id is string => id !== null);
      if (left.length && Date.now() > deadline) throw new Error(`servers still present after their delete: ${left.join(', ')}`);
      if (left.length) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  for (const nova of clients) {
    for (const g of (await nova.listServerGroups()).filter((g) => g.name.startsWith(prefix))) await nova.deleteServerGroup(g.id);
  }
}

export interface ScenarioSuiteOptions {
  title: string;
  /** the cloud, up and answering (or an error saying how to bring it up) */
  cloud(): Promise<ScenarioCloud>;
  /** after Trellis stopped and the cloud was cleaned up */
  teardown?(): Promise<void>;
  /** everything the suite makes is named `<prefix><run id>-...`; what an interrupted run left is swept first */
  prefix: string;
  /** per test: scale-outs and scale-ins on a real cloud take tens of seconds on a loaded machine */
  testTimeoutMs: number;
}

/**
 * The suite itself, so that the real cloud and the simulator run the very same tests. Trellis
 * stops before the cleanup, so that no worker boots a server after the sweep.
 */
export function describeScenarios(options: ScenarioSuiteOptions): void {
  describe(options.title, () => {
    const run = `${options.prefix}${randomUUID().slice(0, 8)}`;
    const timeout = options.testTimeoutMs;
    let cloud: ScenarioCloud | null = null;
    let asAdmin: TrellisOnCloud | null = null;
    let asMember: TrellisOnCloud | null = null;
    const started = (t: TrellisOnCloud | null): [ScenarioCloud, TrellisOnCloud] => {
      if (!cloud || !t) throw new Error('Trellis did not start on the cloud; see the beforeAll failure');
      return [cloud, t];
    };

    beforeAll(async () => {
      cloud = await options.cloud();
      await cloud.cleanup(options.prefix);
      asAdmin = await startTrellisOn(cloud, 'trellis');
    }, timeout);

    afterAll(async () => {
      try {
        await asAdmin?.close();
        await asMember?.close();
        if (cloud) await cloud.cleanup(run);
      } finally {
        await options.teardown?.();
      }
    }, timeout);

    it('anti-affinity + zones 100/200: 3 servers as 1 + 2 on 3 hosts in the group, scale-in keeps the weights, past the hosts fails with Nova\'s fault', () =>
      antiAffinityWithZonesScenario(...started(asAdmin), `${run}-aa`), timeout);

    it("an affinity policy inherits the profile's server group, fills it, and leaves it in Nova on detach", () =>
      inheritedGroupScenario(...started(asAdmin), `${run}-ih`), timeout);

    it("DRS: servers land on the DRS node's service host", () => drsPlacementScenario(...started(asAdmin), `${run}-drs`), timeout);

    it(`${LIST_FROM} servers built and deleted are followed with server lists (changes-since), not a request each`, () =>
      listedBuildsScenario(...started(asAdmin), `${run}-list`), timeout);

    it('DRS without the right to list hypervisors: the scale-out fails with "No suitable vSphere host is available."', async () => {
      // a service user without the admin role: demo itself (it can validate only its own tokens,
      // and the test calls Trellis as demo; demo's trust then names demo as its own trustee)
      asMember = await startTrellisOn(started(asAdmin)[0], 'demo');
      await drsWithoutHypervisorsScenario(...started(asMember), `${run}-nodrs`);
    }, timeout);
  });
}
