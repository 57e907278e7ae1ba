import { ActionEntity, ClusterFindingEntity, NodeEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, PROJECT_A, TOKENS, gatewayOnBus, nodeRow } from '../testing/gateway-harness';
import { authenticatedRoutes } from '../testing/routes';
import { CLUSTER_ACTION_KEYS, NODE_ACTION_KEYS, rpcRoutes, type RpcTargets } from './rpc-routes';

/** `POST /v1/nodes/:node_id/ops` → `POST /v1/nodes/{node_id}/ops`, as RPC routes name their REST call. */
const restLabel = (method: string, path: string) => `${method} ${path.replace(/:([a-z_]+)/g, '{$1}')}`;

describe('RPC has every REST operation', () => {
  it('serves a pattern for every authenticated REST route and every cluster and node action key', () => {
    const routes = [...rpcRoutes({} as RpcTargets).values()];
    const served = new Set(routes.map((r) => r.rest.replace(/ \{".*$/, '')));
    const missing = authenticatedRoutes().map((r) => restLabel(r.method, r.path)).filter((label) => !served.has(label));
    expect(missing).toEqual([]);
    const keys = (prefix: string) => routes.filter((r) => r.rest.startsWith(prefix)).map((r) => /\{"([a-z_]+)"/.exec(r.rest)?.[1]);
    expect(keys('POST /v1/clusters/{cluster_id}/actions').sort()).toEqual([...CLUSTER_ACTION_KEYS].sort());
    expect(keys('POST /v1/nodes/{node_id}/actions').sort()).toEqual([...NODE_ACTION_KEYS].sort());
  });
});

/** The patterns for repair, findings, node actions and node operations answer what REST answers. */
describe('cluster repair, findings, node actions and node operations over RPC', () => {
  const { t, rest: restAs, rpc } = gatewayOnBus();
  const call = (pattern: string, params?: Record<string, unknown>, body?: unknown, microversion = '1.14') => rpc(TOKENS.alice, pattern, params, body, microversion);
  const rest = (version = '1.14') => restAs(TOKENS.alice, version);
  const actionRow = (id: string) => t.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id });
  const finish = (id: string) => t.db.dataSource.getRepository(ActionEntity).update({ id }, { status: 'SUCCEEDED' });

  async function profile(): Promise<string> {
    const created = await call('profile.create', undefined, { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } });
    expect(created.status).toBe(201);
    return created.body.profile.id;
  }

  async function activeCluster(): Promise<string> {
    const created = await call('cluster.create', undefined, { cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: await profile() } });
    expect(created.status).toBe(202);
    await finish(created.action_id!);
    return created.body.cluster.id;
  }

  async function activeNode(): Promise<string> {
    const node = nodeRow({ profile_id: await profile(), physical_id: randomUUID(), index: -1, status_reason: 'Creation succeeded', updated_at: new Date() });
    await t.db.dataSource.getRepository(NodeEntity).save(node);
    return node.id;
  }

  it('cluster.repair starts CLUSTER_REPAIR (202 + action id + Location); a second is refused as REST refuses it', async () => {
    const clusterId = await activeCluster();
    const reply = await call('cluster.repair', { cluster_id: clusterId });
    expect(reply).toMatchObject({ status: 202, body: { action: reply.action_id } });
    expect(reply.headers.location).toMatch(new RegExp(`/v1/actions/${reply.action_id}$`));
    expect(await actionRow(reply.action_id!)).toMatchObject({ action: 'CLUSTER_REPAIR', target: clusterId, status: 'READY' });
    const again = await call('cluster.repair', { cluster_id: clusterId }, {});
    const viaRest = await rest().post(`/v1/clusters/${clusterId}/actions`, { repair: {} });
    expect([again.status, viaRest.status]).toEqual([409, 409]);
    expect(again.error).toEqual(viaRest.body.error);
  });

  it('cluster.recover, replace_nodes and complete_lifecycle check their bodies as REST does', async () => {
    const clusterId = await activeCluster();
    for (const [key, body] of [
      ['recover', { operation: 'explode' }],
      ['replace_nodes', { nodes: 'not-a-map' }],
      ['complete_lifecycle', {}],
    ] as const) {
      const reply = await call(`cluster.${key}`, { cluster_id: clusterId }, body);
      const viaRest = await rest().post(`/v1/clusters/${clusterId}/actions`, { [key]: body });
      expect({ key, status: reply.status, error: reply.error }).toEqual({ key, status: viaRest.status, error: viaRest.body.error });
      expect(reply.status).toBe(400);
    }
    const recovered = await call('cluster.recover', { cluster_id: clusterId }, { operation: 'REBOOT' });
    expect(recovered.status).toBe(202);
    expect(await actionRow(recovered.action_id!)).toMatchObject({ action: 'CLUSTER_RECOVER', inputs: { operation: 'REBOOT' } });
  });

  it("cluster_finding.list answers REST's findings, with the same status filter and errors", async () => {
    const clusterId = await activeCluster();
    const now = new Date();
    await t.db.dataSource.getRepository(ClusterFindingEntity).insert({
      id: randomUUID(), cluster_id: clusterId, project: PROJECT_A, kind: 'shared_host', fingerprint: 'f1', policy_id: null, group_id: 'g1',
      host: 'host-1', zone: 'az1', node_ids: [], message: 'two members share host-1', detail: {}, status: 'OPEN', found_by: null,
      resolved_by: null, found_at: now, last_seen_at: now, resolved_at: null,
    });
    const listed = await call('cluster_finding.list', { cluster_id: clusterId });
    const viaRest = await rest().get(`/v1/clusters/${clusterId}/findings`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(viaRest.body);
    expect(listed.body.findings.map((f: { kind: string }) => f.kind)).toEqual(['shared_host']);
    expect((await call('cluster_finding.list', { cluster_id: clusterId, status: 'RESOLVED' })).body.findings).toEqual([]);
    const bad = await call('cluster_finding.list', { cluster_id: clusterId, status: 'CLOSED' });
    const badRest = await rest().get(`/v1/clusters/${clusterId}/findings?status=CLOSED`);
    expect([bad.status, bad.error]).toEqual([400, badRest.body.error]);
  });

  it('node.check and node.recover start NODE_CHECK and NODE_RECOVER with Senlin\'s inputs; bad parameters get REST\'s 400', async () => {
    const nodeId = await activeNode();
    const checked = await call('node.check', { node_id: nodeId }, {});
    expect(checked).toMatchObject({ status: 202, body: { action: checked.action_id } });
    expect(await actionRow(checked.action_id!)).toMatchObject({ action: 'NODE_CHECK', target: nodeId, status: 'READY' });
    await finish(checked.action_id!);

    const recovered = await call('node.recover', { node_id: nodeId }, { operation: 'reboot', operation_params: { type: 'soft' } });
    expect(recovered.status).toBe(202);
    expect(await actionRow(recovered.action_id!)).toMatchObject({ action: 'NODE_RECOVER', inputs: { operation: 'reboot', operation_params: { type: 'soft' } } });
    await finish(recovered.action_id!);

    const bad = await call('node.recover', { node_id: nodeId }, { operation: 'explode' });
    const badRest = await rest().post(`/v1/nodes/${nodeId}/actions`, { recover: { operation: 'explode' } });
    expect([bad.status, bad.error]).toEqual([400, badRest.body.error]);
    const unknown = await call('node.check', { node_id: randomUUID() }, {});
    expect(unknown.status).toBe(404);
  });

  it('node.operation starts NODE_OPERATION; below 1.4 and for an unknown operation it answers as REST', async () => {
    const nodeId = await activeNode();
    const rebooted = await call('node.operation', { node_id: nodeId }, { reboot: { type: 'HARD' } });
    expect(rebooted).toMatchObject({ status: 202, body: { action: rebooted.action_id } });
    expect(await actionRow(rebooted.action_id!)).toMatchObject({ action: 'NODE_OPERATION', inputs: { operation: 'reboot', params: { type: 'HARD' } } });
    await finish(rebooted.action_id!);

    const old = await call('node.operation', { node_id: nodeId }, { reboot: {} }, '1.3');
    const oldRest = await rest('1.3').post(`/v1/nodes/${nodeId}/ops`, { reboot: {} });
    expect([old.status, old.error]).toEqual([oldRest.status, oldRest.body.error]);
    expect(old.status).toBeGreaterThanOrEqual(400);
    const unknown = await call('node.operation', { node_id: nodeId }, { explode: {} });
    const unknownRest = await rest().post(`/v1/nodes/${nodeId}/ops`, { explode: {} });
    expect([unknown.status, unknown.error]).toEqual([400, unknownRest.body.error]);
  });
});
