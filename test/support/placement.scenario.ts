import { ApiClient, keystoneToken, memberHostId } from './api-client';
import { createProfileAndCluster, nodesOf } from './scale-out.scenario';
import type { Embedded } from '../../cli/embedded';

/**
 * Topology for the placement scenarios: az1 with 3 hosts, az2 with 4 (one of them a vSphere DRS
 * cluster), so that 6 anti-affine servers weighted 100/200 fit (2 in az1, 4 in az2).
 */
export const PLACEMENT_TOPOLOGY = {
  zones: [
    { name: 'az1', hosts: [{ name: 'host-1' }, { name: 'host-2' }, { name: 'host-3' }] },
    {
      name: 'az2',
      hosts: [{ name: 'host-4' }, { name: 'host-5' }, { name: 'host-6' }, { name: 'host-7', hypervisor_hostname: 'vsphere-drs-cluster-7' }],
    },
  ],
};

export async function demoApi(trellis: Embedded): Promise<ApiClient> {
  const token = await keystoneToken(trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
  return new ApiClient(trellis.url, token);
}

export async function createPolicy(api: ApiClient, name: string, spec: Record<string, unknown>): Promise<string> {
  const res = await api.post('/v1/policies', { policy: { name, spec } });
  if (res.status !== 201) throw new Error(`policy create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.policy.id;
}

export async function act(api: ApiClient, cluster: string, body: Record<string, unknown>, timeoutMs = 60_000) {
  const res = await api.post(`/v1/clusters/${cluster}/actions`, body);
  if (res.status !== 202) throw new Error(`${Object.keys(body)[0]}: ${res.status} ${JSON.stringify(res.body)}`);
  return api.waitForAction(ApiClient.actionIdOf(res), timeoutMs);
}

export const zoneSpec = {
  type: 'senlin.policy.zone_placement',
  version: 1.0,
  properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 200 }] },
};

export const antiAffinitySpec = (group: string) => ({
  type: 'senlin.policy.affinity',
  version: 1.0,
  properties: { servergroup: { name: group, policies: 'anti-affinity' } },
});

function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

/**
 * Issue 4 §9: anti-affinity + zones weighted 100/200. Scale out 6 → 2 and 4 servers on 6 distinct
 * hosts; scale in 3 → the distribution still follows the weights; more than the hosts can take →
 * FAILED with Nova's NoValidHost reason. Every step's decision is stored and shown.
 */
export async function antiAffinityWithZones(trellis: Embedded): Promise<void> {
  const api = await demoApi(trellis);
  const { clusterId } = await createProfileAndCluster(api, 'spark');
  await createPolicy(api, 'zones', zoneSpec);
  await createPolicy(api, 'apart', antiAffinitySpec('spark-apart'));
  expect((await act(api, 'spark', { policy_attach: { policy_id: 'zones' } })).status).toBe('SUCCEEDED');
  const attach = await act(api, 'spark', { policy_attach: { policy_id: 'apart' } });
  expect(attach).toMatchObject({ status: 'SUCCEEDED' });

  const bindings = await api.get(`/v1/clusters/${clusterId}/policies`);
  expect(bindings.body.cluster_policies.map((b: { policy_name: string }) => b.policy_name).sort()).toEqual(['apart', 'zones']);
  const groupId = bindings.body.cluster_policies.find((b: { policy_name: string }) => b.policy_name === 'apart').data.AffinityPolicy.data
    .servergroup_id as string;
  const groups = (trellis.simulator!.state.snapshot() as { server_groups: Array<{ id: string; name: string; policy: string }> }).server_groups;
  expect(groups).toContainEqual(expect.objectContaining({ id: groupId, name: 'spark-apart', policy: 'anti-affinity' }));

  // dry run first: the plan, without an action or a server
  const actionsBefore = (await api.get('/v1/actions')).body.actions.length;
  const dry = await api.post(`/v1/clusters/${clusterId}/actions?dry_run=true`, { scale_out: { count: 6 } });
  expect(dry.status).toBe(200);
  expect(dry.body.decision.status).toBe('OK');
  const planned = dry.body.decision.plan.create_nodes.map((n: { placement: { zone: string; servergroup: string } }) => n.placement);
  expect(countBy(planned, (p: { zone: string }) => p.zone)).toEqual({ az1: 2, az2: 4 });
  expect(planned.every((p: { servergroup: string }) => p.servergroup === groupId)).toBe(true);
  expect((await api.get('/v1/actions')).body.actions.length).toBe(actionsBefore);

  const out = await act(api, 'spark', { scale_out: { count: 6 } });
  expect(out).toMatchObject({ status: 'SUCCEEDED' });
  let nodes = await nodesOf(api, clusterId);
  expect(nodes).toHaveLength(6);
  expect(countBy(nodes, (n) => n.data.placement.zone)).toEqual({ az1: 2, az2: 4 });
  expect(new Set(nodes.map((n) => n.data.placement.host)).size).toBe(6);
  expect(nodes.every((n) => n.data.placement.servergroup === groupId)).toBe(true);

  const decision = await api.get(`/v1/actions/${out.id}/decision`);
  expect(decision.status).toBe(200);
  expect(decision.body.decision.trace.map((t: { policy_name: string; verdict: string }) => [t.policy_name, t.verdict])).toEqual([
    ['zones', 'OK'],
    ['apart', 'OK'],
  ]);
  expect(decision.body.decision.input.cluster.nodes).toEqual([]);
  expect(out.data.creation).toMatchObject({ count: 6, zones: { az1: 2, az2: 4 } });

  const scaleIn = await act(api, 'spark', { scale_in: { count: 3 } });
  expect(scaleIn).toMatchObject({ status: 'SUCCEEDED' });
  expect(scaleIn.data.deletion).toMatchObject({ count: 3, zones: { az1: 1, az2: 2 } });
  nodes = await nodesOf(api, clusterId);
  expect(countBy(nodes, (n) => n.data.placement.zone)).toEqual({ az1: 1, az2: 2 });
  const servers = (trellis.simulator!.state.snapshot() as { servers: Array<{ metadata: Record<string, string>; status: string }> }).servers.filter(
    (s) => s.metadata.trellis_cluster === clusterId && s.status !== 'DELETED',
  );
  expect(servers).toHaveLength(3);

  // 3 + 5 anti-affine servers on 7 hosts: Nova cannot place them all
  const tooMany = await act(api, 'spark', { scale_out: { count: 5 } });
  expect(tooMany.status).toBe('FAILED');
  // Nova's own fault: NoValidHost, or (servers booted at once into a full group) the retry
  // exhaustion real Nova reports when its late anti-affinity check fails
  expect(tooMany.status_reason).toMatch(/No valid host was found|Exceeded maximum number of retries/);
}

/**
 * DRS: the affinity policy boots every server onto the hypervisor that is a vSphere DRS cluster, by
 * forcing its host (`az2:host-7`). Nova lets only an admin force a host, and Trellis acts as the
 * user who asked (issue 17): the cloud admin's servers land there; a member's scale-out fails at
 * once with Nova's refusal, as the member's own `openstack server create` would.
 */
export async function drsPlacement(trellis: Embedded): Promise<void> {
  const drs = {
    type: 'senlin.policy.affinity',
    version: 1.0,
    properties: { servergroup: { policies: 'affinity' }, availability_zone: 'az2', enable_drs_extension: true },
  };
  const admin = await adminApi(trellis);
  const { clusterId } = await createProfileAndCluster(admin, 'vmware');
  await createPolicy(admin, 'drs', drs);
  expect((await act(admin, 'vmware', { policy_attach: { policy_id: 'drs' } })).status).toBe('SUCCEEDED');
  const out = await act(admin, 'vmware', { scale_out: { count: 2 } });
  expect(out.status).toBe('SUCCEEDED');
  // the cloud admin sees host names
  expect(out.data.placement.placements.map((p: { zone: string }) => p.zone)).toEqual(['az2:host-7', 'az2:host-7']);
  const nodes = await nodesOf(admin, clusterId);
  expect(nodes.map((n) => n.data.placement.host)).toEqual(['host-7', 'host-7']);

  const member = await demoApi(trellis);
  await createProfileAndCluster(member, 'vmware-member');
  await createPolicy(member, 'drs-member', drs);
  expect((await act(member, 'vmware-member', { policy_attach: { policy_id: 'drs-member' } })).status).toBe('SUCCEEDED');
  const refused = await act(member, 'vmware-member', { scale_out: { count: 1 } });
  expect(refused.status).toBe('FAILED');
  expect(refused.status_reason).toContain("Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.");
}

export async function adminApi(trellis: Embedded): Promise<ApiClient> {
  const token = await keystoneToken(trellis.simulator!.authUrl, { name: 'admin', password: 'admin', project: 'admin' });
  return new ApiClient(trellis.url, token);
}
