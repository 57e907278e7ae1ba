import { ApiClient, memberHostId } from './api-client';
import { act, createPolicy, demoApi, zoneSpec } from './placement.scenario';
import { nodesOf } from './scale-out.scenario';
import type { Embedded } from '../../cli/embedded';

/**
 * Issue 6 §5, written once and run on the embedded default (test/e2e) and on RabbitMQ + PostgreSQL
 * (test/integration). Needs the role anti-affinity plugin registered and PLACEMENT_TOPOLOGY (7 hosts).
 */

interface SimState {
  servers: Array<{ id: string; name: string; status: string; host: string | null; zone: string | null; group: string | null; metadata: Record<string, string> }>;
  server_groups: Array<{ id: string; name: string; policy: string; members: string[] }>;
}
const sim = (trellis: Embedded) => trellis.simulator!.state.snapshot() as unknown as SimState;

export const roleAntiAffinitySpec = {
  type: 'trellis.policy.role_anti_affinity',
  version: 1.0,
  properties: { roles: ['db', 'namenode'] },
};

/** A profile whose servers bear the role `db`, and a cluster of it (config as given). */
export async function createRoleCluster(api: ApiClient, name: string, config: Record<string, unknown> = {}) {
  const profile = await api.post('/v1/profiles', {
    profile: {
      name: `${name}-profile`,
      spec: {
        type: 'os.nova.server',
        version: 1.0,
        properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [], metadata: { roles: 'db' } },
      },
    },
  });
  if (profile.status !== 201) throw new Error(`profile create: ${profile.status} ${JSON.stringify(profile.body)}`);
  const cluster = await api.post('/v1/clusters', {
    cluster: { name, profile_id: `${name}-profile`, desired_capacity: 0, min_size: 0, max_size: -1, config },
  });
  if (cluster.status !== 202) throw new Error(`cluster create: ${cluster.status} ${JSON.stringify(cluster.body)}`);
  expect((await api.waitForAction(ApiClient.actionIdOf(cluster))).status).toBe('SUCCEEDED');
  return cluster.body.cluster.id as string;
}

async function groupOf(api: ApiClient, clusterId: string): Promise<{ id: string; name: string }> {
  const bindings = await api.get(`/v1/clusters/${clusterId}/policies`);
  const aa = bindings.body.cluster_policies.find((b: { policy_type: string }) => b.policy_type.startsWith('trellis.policy.role_anti_affinity'));
  return aa.data.RoleAntiAffinityPolicy.data.groups[0];
}

/** Role nodes of the cluster all in `groupId`, on distinct hosts, and Nova agrees. */
async function expectUnderGroup(trellis: Embedded, api: ApiClient, clusterId: string, groupId: string, roleNodes: number) {
  const nodes = (await nodesOf(api, clusterId)).filter((n) => n.metadata?.roles !== '');
  expect(nodes).toHaveLength(roleNodes);
  expect(nodes.every((n) => n.status === 'ACTIVE' && n.data.placement.servergroup === groupId)).toBe(true);
  const state = sim(trellis);
  const group = state.server_groups.find((g) => g.id === groupId)!;
  expect(group).toBeDefined();
  expect([...group.members].sort()).toEqual(nodes.map((n) => n.physical_id).sort());
  const hosts = state.servers.filter((s) => group.members.includes(s.id)).map((s) => s.host);
  expect(new Set(hosts).size).toBe(roleNodes);
}

async function findings(api: ApiClient, clusterId: string, status = 'OPEN') {
  const res = await api.get(`/v1/clusters/${clusterId}/findings?status=${status}`);
  expect(res.status).toBe(200);
  return res.body.findings as Array<Record<string, any>>;
}

async function events(api: ApiClient, clusterId: string) {
  const res = await api.get(`/v1/events?cluster_id=${clusterId}&limit=200`);
  expect(res.status).toBe(200);
  return res.body.events as Array<Record<string, any>>;
}

/**
 * Delete the group out of band, scale out → the scaling action finds the group gone, creates it
 * again, replaces every role node into it one at a time, then grows; a node without a role stays
 * out of the group and is left alone. With `drift.on_scale: fail` the same meeting fails instead.
 */
export async function vanishedGroupRepairedBeforeScaleOut(trellis: Embedded): Promise<void> {
  const api = await demoApi(trellis);
  const clusterId = await createRoleCluster(api, 'hadoop');
  await createPolicy(api, 'hadoop-apart', roleAntiAffinitySpec);
  await createPolicy(api, 'hadoop-zones', zoneSpec);
  expect(await act(api, 'hadoop', { policy_attach: { policy_id: 'hadoop-zones' } })).toMatchObject({ status: 'SUCCEEDED' });
  expect(await act(api, 'hadoop', { policy_attach: { policy_id: 'hadoop-apart' } })).toMatchObject({ status: 'SUCCEEDED' });
  const first = await groupOf(api, clusterId);
  expect(first.name).toBe('hadoop-aa-1');

  const grown = await act(api, 'hadoop', { scale_out: { count: 3 } });
  expect(grown).toMatchObject({ status: 'SUCCEEDED' });
  // zone placement and the plugin (which says so) never read the hypervisors: the decision's
  // snapshot carries none, though the cloud's facts hold them
  const decided = await api.get(`/v1/actions/${grown.id}/decision`);
  expect(decided.status).toBe(200);
  expect(decided.body.decision.input.cloud.availability_zones.length).toBeGreaterThan(0);
  expect(Object.keys(decided.body.decision.input.cloud)).not.toContain('hypervisors');
  // and decided on a summary (the plugin counts its groups' members; no node listed)
  expect(decided.body.decision.input.cluster.summary).toMatchObject({ node_count: 0, groups: [] });
  // a node without a role: outside the group, and no repair touches it
  const plain = await api.post('/v1/nodes', { node: { name: 'edge', profile_id: 'hadoop-profile', cluster_id: 'hadoop', metadata: { roles: '' } } });
  expect(plain.status).toBe(202);
  expect((await api.waitForAction(ApiClient.actionIdOf(plain))).status).toBe('SUCCEEDED');
  await expectUnderGroup(trellis, api, clusterId, first.id, 3);
  const edge = (await nodesOf(api, clusterId)).find((n) => n.name === 'edge')!;
  expect(edge.data.placement.servergroup).toBeUndefined();
  const before = (await nodesOf(api, clusterId)).map((n) => n.id);

  expect(trellis.simulator!.state.deleteGroup(first.id)).toBe(true);

  const out = await act(api, 'hadoop', { scale_out: { count: 1 } });
  expect(out).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster scaling succeeded.' });
  const group = await groupOf(api, clusterId);
  expect(group).toMatchObject({ name: 'hadoop-aa-1', created: true });
  expect(group.id).not.toBe(first.id);
  await expectUnderGroup(trellis, api, clusterId, group.id, 4);
  // decided after the repair on a summary: the group's 3 members counted, none listed
  const decision = (await api.get(`/v1/actions/${out.id}/decision`)).body.decision;
  expect(decision.input.cluster.summary.groups).toEqual([{ id: group.id, nodes: 3 }]);
  expect(decision.input.cluster.nodes).toEqual([]);
  // and on the project's server groups listed without their members (no bound type reads them)
  const listed = decision.input.cloud.server_groups as Array<Record<string, unknown>>;
  expect(listed.map((g) => g.id)).toContain(group.id);
  for (const g of listed) expect(Object.keys(g)).not.toContain('members');
  const after = await nodesOf(api, clusterId);
  expect(after.find((n) => n.name === 'edge')).toMatchObject({ id: edge.id, physical_id: edge.physical_id });
  expect(after.filter((n) => before.includes(n.id)).map((n) => n.name)).toEqual(['edge']);

  // the repair is recorded: on the action, as findings, as events
  expect(out.outputs.drift.findings).toEqual([expect.objectContaining({ kind: 'group_missing', group_id: first.id })]);
  expect(out.outputs.drift.replaced).toHaveLength(3);
  const history = await findings(api, clusterId, 'all');
  expect(history).toContainEqual(expect.objectContaining({ kind: 'group_missing', group_id: first.id, status: 'RESOLVED', found_by: out.id, resolved_by: out.id }));
  expect(await findings(api, clusterId)).toEqual([]);
  const seen = await events(api, clusterId);
  expect(seen.filter((e) => e.status === 'REPLACED')).toHaveLength(3);
  expect(seen.some((e) => e.status === 'DRIFT' && e.status_reason.includes('no longer exists'))).toBe(true);

  // a check afterwards finds nothing
  const check = await act(api, 'hadoop', { check: {} });
  expect(check).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster checking completed: the cloud matches the policies.' });
  // judged after the worker's survey, on a snapshot read again: without the hypervisors too
  const judged = await api.get(`/v1/actions/${check.id}/decision`);
  expect(judged.status).toBe(200);
  expect(judged.body.decision.input.cluster.nodes.length).toBeGreaterThan(0);
  expect(Object.keys(judged.body.decision.input.cloud)).not.toContain('hypervisors');
  // drift is judged on the groups' members: the check's snapshot lists them
  const judgedGroup = (judged.body.decision.input.cloud.server_groups as Array<{ id: string; members?: string[] }>).find((g) => g.id === group.id);
  expect(judgedGroup?.members).toHaveLength(4);
}

/** `drift.on_scale: fail`: the scaling action that meets a vanished group fails, naming why. */
export async function vanishedGroupFailsScaleOut(trellis: Embedded): Promise<void> {
  const api = await demoApi(trellis);
  const clusterId = await createRoleCluster(api, 'kafka', { 'drift.on_scale': 'fail' });
  await createPolicy(api, 'kafka-apart', roleAntiAffinitySpec);
  expect(await act(api, 'kafka', { policy_attach: { policy_id: 'kafka-apart' } })).toMatchObject({ status: 'SUCCEEDED' });
  expect(await act(api, 'kafka', { scale_out: { count: 2 } })).toMatchObject({ status: 'SUCCEEDED' });
  const group = await groupOf(api, clusterId);
  trellis.simulator!.state.deleteGroup(group.id);
  const servers = sim(trellis).servers.filter((s) => s.metadata.trellis_cluster === clusterId && s.status !== 'DELETED').length;

  const out = await act(api, 'kafka', { scale_out: { count: 1 } });
  expect(out.status).toBe('FAILED');
  expect(out.status_reason).toContain(`The server group 'kafka-aa-1' (${group.id}) of policy 'kafka-apart' no longer exists in Nova.`);
  expect(out.status_reason).toContain("config 'drift.on_scale' is 'fail'");
  expect(sim(trellis).servers.filter((s) => s.metadata.trellis_cluster === clusterId && s.status !== 'DELETED')).toHaveLength(servers);
  expect((await nodesOf(api, clusterId)).length).toBe(2);
  expect(await findings(api, clusterId)).toEqual([expect.objectContaining({ kind: 'group_missing', status: 'OPEN' })]);
}

/**
 * Migrate one member onto another's host → `check` reports hosts_shared; a dry run of `repair`
 * shows the one replacement without doing it; `repair` replaces that member (new one ACTIVE before
 * the old one goes, never below min_size) and a last look finds nothing.
 */
export async function sharedHostCheckedAndRepaired(trellis: Embedded): Promise<void> {
  const { api, clusterId } = await roleClusterApart(trellis, 'spark-db', 3);
  // min_size 3 with 3 nodes: a repair may only delete a member once its replacement is ACTIVE
  expect(await act(api, 'spark-db', { resize: { min_size: 3 } })).toMatchObject({ status: 'SUCCEEDED' });
  const group = await groupOf(api, clusterId);
  const nodes = (await nodesOf(api, clusterId)).sort((x, y) => x.index - y.index);
  const [a, b] = nodes;
  const hostA = sim(trellis).servers.find((s) => s.id === a.physical_id)!.host!;
  trellis.simulator!.state.migrate(b.physical_id, hostA);

  const check = await act(api, 'spark-db', { check: {} });
  expect(check.status).toBe('SUCCEEDED');
  expect(check.status_reason).toBe('Cluster checking completed: 1 finding(s): hosts_shared.');
  const open = await findings(api, clusterId);
  // demo is a member of its project: it sees the host as the project's hostId of it
  const shownA = memberHostId(a.project, hostA);
  expect(open).toEqual([expect.objectContaining({ kind: 'hosts_shared', host: shownA, group_id: group.id, node_ids: [a.id, b.id], found_by: check.id })]);
  expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster.data.drift).toMatchObject({ open: 1, kinds: { hosts_shared: 1 } });

  const actionsBefore = (await api.get('/v1/actions')).body.actions.length;
  const dry = await api.post(`/v1/clusters/${clusterId}/actions?dry_run=true`, { repair: {} });
  expect(dry.status).toBe(200);
  expect(dry.body.decision.status).toBe('OK');
  expect(dry.body.decision.plan.repair.replacements).toEqual([
    expect.objectContaining({ old_node_id: b.id, placement: expect.objectContaining({ servergroup: group.id }), reasons: ['hosts_shared'] }),
  ]);
  expect((await api.get('/v1/actions')).body.actions.length).toBe(actionsBefore);

  const repair = await act(api, 'spark-db', { repair: {} });
  expect(repair).toMatchObject({ status: 'SUCCEEDED' });
  expect(repair.status_reason).toBe('Cluster repair completed: 0 server group(s) created again, 1 node(s) replaced; the cloud matches the policies.');
  expect(repair.outputs.drift.replaced).toEqual([expect.objectContaining({ old_node_id: b.id })]);
  await expectUnderGroup(trellis, api, clusterId, group.id, 3);
  const after = await nodesOf(api, clusterId);
  expect(after.map((n) => n.id)).not.toContain(b.id);
  expect(await findings(api, clusterId)).toEqual([]);
  expect(await findings(api, clusterId, 'RESOLVED')).toEqual([expect.objectContaining({ kind: 'hosts_shared', resolved_by: repair.id })]);

  const decision = await api.get(`/v1/actions/${repair.id}/decision`);
  expect(decision.body.decision.plan.repair.replacements).toHaveLength(1);
}

/**
 * A member moved next to another between two scale-outs: the second one's survey, which lists only
 * what Nova changed since the first one's (ClusterListings), sees it and records the finding.
 */
export async function movedServerSeenByNextScaleOut(trellis: Embedded): Promise<void> {
  const { api, clusterId } = await roleClusterApart(trellis, 'hdfs-db', 2);
  const [a, b] = (await nodesOf(api, clusterId)).sort((x, y) => x.index - y.index);
  const hostA = sim(trellis).servers.find((s) => s.id === a.physical_id)!.host!;
  trellis.simulator!.state.migrate(b.physical_id, hostA);

  const grown = await act(api, 'hdfs-db', { scale_out: { count: 1 } });
  expect(grown.status).toBe('SUCCEEDED');
  const group = await groupOf(api, clusterId);
  expect(await findings(api, clusterId)).toEqual([
    expect.objectContaining({ kind: 'hosts_shared', host: memberHostId(a.project, hostA), group_id: group.id, node_ids: [a.id, b.id], found_by: grown.id }),
  ]);
}

/** A role cluster of `nodes` nodes with role anti-affinity attached (policy `<name>-apart`), as demo. */
async function roleClusterApart(trellis: Embedded, name: string, nodes: number): Promise<{ api: ApiClient; clusterId: string }> {
  const api = await demoApi(trellis);
  const clusterId = await createRoleCluster(api, name);
  await createPolicy(api, `${name}-apart`, roleAntiAffinitySpec);
  expect(await act(api, name, { policy_attach: { policy_id: `${name}-apart` } })).toMatchObject({ status: 'SUCCEEDED' });
  expect(await act(api, name, { scale_out: { count: nodes } })).toMatchObject({ status: 'SUCCEEDED' });
  return { api, clusterId };
}
