import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import { createEvaluator } from '@trellis/decisions';
import { ActionEntity, ClusterEntity, ClusterPolicyEntity, PolicyEntity, row, type Database } from '@trellis/persistence';
import { Policy, PolicyRegistry, PolicyType, type PolicyDriftFinding } from '@trellis/policies';
import { openTestDatabase } from '@trellis/testing/database';
import { DriftScheduler } from './drift-scheduler';

/** A plugin type of this spec's own that offers a drift check. */
@PolicyType({
  name: 'test.policy.drifting',
  versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2026.11' }] },
  profileTypes: ['ANY'],
  targets: [],
  priority: 500,
  hooks: ['drift'],
  properties: {},
})
class DriftingPolicy extends Policy {
  override detectDrift(): PolicyDriftFinding[] {
    return [];
  }
}

describe('DriftScheduler: periodic checks for the clusters whose policies offer a drift check', () => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());

  /** a cluster with one enabled binding of a policy of `type` */
  async function clusterBoundTo(type: string): Promise<string> {
    const clusterId = randomUUID();
    const policyId = randomUUID();
    const now = new Date();
    await db.dataSource.getRepository(ClusterEntity).insert(
      row<ClusterEntity>({
        id: clusterId, name: `c-${clusterId.slice(0, 8)}`, profile_id: randomUUID(), project: 'p', user: 'u', domain: null,
        init_at: now, created_at: now, updated_at: now, min_size: 0, max_size: -1, desired_capacity: 0, timeout: 3600,
        status: 'ACTIVE', status_reason: '', metadata: {}, data: {}, config: {}, next_index: 1,
      }),
    );
    const [name, version] = type.split(/-(?=[^-]+$)/);
    await db.dataSource.getRepository(PolicyEntity).insert(
      row<PolicyEntity>({
        id: policyId, name: `p-${policyId.slice(0, 8)}`, type, spec: { type: name!, version: version!, properties: {} }, data: {},
        project: 'p', user: 'u', domain: null, created_at: now, updated_at: null,
      }),
    );
    await db.dataSource.getRepository(ClusterPolicyEntity).insert(
      row<ClusterPolicyEntity>({ id: randomUUID(), cluster_id: clusterId, policy_id: policyId, enabled: true, priority: 0, data: {}, last_op: null, attached_at: now }),
    );
    return clusterId;
  }

  const checksOf = async (clusterId: string) =>
    (await db.dataSource.getRepository(ActionEntity).findBy({ cluster_id: clusterId, action: 'CLUSTER_CHECK' })).length;

  it('checks a cluster bound to a loaded type that declares the drift hook, built in or plugin, and no other', async () => {
    const evaluator = createEvaluator(PolicyRegistry.withBuiltins().register(DriftingPolicy));
    const zones = await clusterBoundTo('senlin.policy.zone_placement-1.0');
    const plugin = await clusterBoundTo('test.policy.drifting-1.0');
    const affinity = await clusterBoundTo('senlin.policy.affinity-1.0');
    const scheduler = new DriftScheduler(db.dataSource, silentLogger, { intervalSeconds: 60, driftAwareTypes: evaluator.driftAwareTypes() });

    await scheduler.tick();

    expect(evaluator.driftAwareTypes()).toEqual(['senlin.policy.zone_placement-1.0', 'test.policy.drifting-1.0']);
    expect([await checksOf(zones), await checksOf(plugin), await checksOf(affinity)]).toEqual([1, 1, 0]);
  });
});
