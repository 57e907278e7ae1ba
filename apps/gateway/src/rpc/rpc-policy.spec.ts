import { ActionEntity, CloudFactEntity, ClusterPolicyEntity, DecisionEntity, EventEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ADMIN_PROJECT, NOVA_PROFILE_SPEC, PROJECT_A, TOKENS, gatewayOnBus } from '../testing/gateway-harness';
import { rpcRoutes, type RpcTargets } from './rpc-routes';

const REFUSED = { code: 403, message: 'You are not authorized to complete this operation.', type: 'Forbidden' };
const PATTERNS = [...rpcRoutes({} as RpcTargets)];
// service.list lists Trellis's own processes: the cloud admin's (services/services.spec.ts)
const READS = PATTERNS.filter(([p, r]) => r.rest.startsWith('GET ') && p !== 'service.list');
const WRITES = PATTERNS.filter(([, r]) => !r.rest.startsWith('GET '));

/** The RPC dispatcher checks the same rules as REST, with the same refusal. */
describe('policy rules over RPC', () => {
  const { t, rpc: call } = gatewayOnBus({
    env: { TRELLIS_ADMIN_PROJECT: ADMIN_PROJECT },
    seed: (db) => t.db.dataSource.getRepository(CloudFactEntity).save({ kind: 'availability_zones', data: { items: ['az1'] }, fetched_at: new Date() }),
  });
  const ids: Record<string, string> = {};
  let readyAction: string;

  beforeAll(async () => {
    const profile = await call(TOKENS.alice, 'profile.create', undefined, { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
    const policy = await call(TOKENS.alice, 'policy.create', undefined, {
      policy: { name: 'z', spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }] } } },
    });
    const cluster = await call(TOKENS.alice, 'cluster.create', undefined, { cluster: { name: 'c', profile_id: profile.body.profile.id } });
    const node = await call(TOKENS.alice, 'node.create', undefined, { node: { name: 'n', profile_id: profile.body.profile.id } });
    const receiver = await call(TOKENS.alice, 'receiver.create', undefined, {
      receiver: { name: 'r', type: 'webhook', cluster_id: cluster.body.cluster.id, action: 'CLUSTER_SCALE_OUT' },
    });
    expect([profile.status, policy.status, cluster.status, node.status, receiver.status]).toEqual([201, 201, 202, 202, 201]);
    await t.db.dataSource.getRepository(ActionEntity).update({ id: cluster.action_id! }, { status: 'SUCCEEDED' });
    Object.assign(ids, {
      profile_id: profile.body.profile.id,
      policy_id: policy.body.policy.id,
      cluster_id: cluster.body.cluster.id,
      node_id: node.body.node.id,
      action_id: cluster.action_id!,
      event_id: randomUUID(),
      receiver_id: receiver.body.receiver.id,
    });
    readyAction = node.action_id!;
    await t.db.dataSource.getRepository(ClusterPolicyEntity).insert({
      id: randomUUID(),
      cluster_id: ids.cluster_id,
      policy_id: ids.policy_id,
      enabled: true,
      priority: 100,
      data: {},
      last_op: new Date(),
      attached_at: new Date(),
    });
    await t.db.dataSource.getRepository(EventEntity).insert({
      id: ids.event_id,
      timestamp: new Date(),
      oid: ids.cluster_id,
      oname: 'c',
      otype: 'CLUSTER',
      cluster_id: ids.cluster_id,
      level: 20,
      user: 'alice-id',
      project: PROJECT_A,
      action: 'CLUSTER_CREATE',
      status: 'start',
      status_reason: '',
      meta_data: {},
    });
    await t.db.dataSource
      .getRepository(DecisionEntity)
      .insert({ action_id: ids.action_id, hook: 'pre_op', input: {}, output: {}, plan: {}, trace: [], created_at: new Date() });
  });

  const paramsOf = (pattern: string, path: readonly string[]) =>
    Object.fromEntries(
      path.map((name) => [
        name,
        name === 'type_name'
          ? pattern.startsWith('profile_type') ? 'os.nova.server-1.0' : 'senlin.policy.zone_placement-1.0'
          : name === 'path' ? 'name' : ids[name],
      ]),
    );

  it('answers a reader 200 on every read pattern', async () => {
    expect(READS.length).toBeGreaterThanOrEqual(15);
    const failed: string[] = [];
    for (const [pattern, route] of READS) {
      const reply = await call(TOKENS.reader, pattern, paramsOf(pattern, route.path));
      if (reply.status !== 200) failed.push(`${pattern} → ${reply.status} ${JSON.stringify(reply.error)}`);
    }
    expect(failed).toEqual([]);
  });

  it("answers a reader 403 with Senlin's error on every other pattern, dry runs included", async () => {
    expect(WRITES.length).toBeGreaterThanOrEqual(15);
    const failed: string[] = [];
    for (const [pattern, route] of WRITES) {
      const params = paramsOf(pattern, route.path);
      for (const p of pattern.startsWith('cluster.') && route.query && route.body ? [params, { ...params, dry_run: true }] : [params]) {
        const reply = await call(TOKENS.reader, pattern, p, route.body ? {} : undefined);
        if (reply.status !== 403 || !isDeepStrictEqual(reply.error, REFUSED)) failed.push(`${pattern} ${JSON.stringify(p)} → ${reply.status}`);
      }
    }
    expect(failed).toEqual([]);
  });

  it('refuses global_project and replay to a member and a project admin, not to the cloud admin', async () => {
    for (const token of [TOKENS.alice, TOKENS.projectAdmin]) {
      expect(await call(token, 'cluster.list', { global_project: true })).toMatchObject({ status: 403, error: REFUSED });
      expect(await call(token, 'action.replay', { action_id: readyAction })).toMatchObject({ status: 403, error: REFUSED });
    }
    const all = await call(TOKENS.admin, 'cluster.list', { global_project: true });
    expect(all.status).toBe(200);
    expect(all.body.clusters.map((c: { id: string }) => c.id)).toContain(ids.cluster_id);
    expect(await call(TOKENS.admin, 'action.replay', { action_id: readyAction })).toMatchObject({ status: 202, action_id: readyAction });
  });
});
