import { randomUUID } from 'node:crypto';
import type { ActionEntity, Database } from '@trellis/persistence';
import { loadSnapshot } from '@trellis/decisions';
import { openPostgresTestDatabase } from '@trellis/testing/database';

/**
 * Issue 15, point 2: the statement that reads a decision's input is a named prepared statement that
 * PostgreSQL runs on its generic plan. Sent unnamed, it was parsed, analysed and planned on every
 * decision: about 1.6 ms of PostgreSQL's CPU per action, more than executing it (BENCHMARKS.md,
 * pipeline, "Session 23"). `pg_prepared_statements` (PostgreSQL 14+) counts, per session, how
 * often each statement was planned for its values (custom) and run on the one plan (generic):
 * PostgreSQL tries five custom plans, then keeps the generic one unless it estimates custom plans
 * cheaper. One pooled connection, so the statements and the view share a session.
 */
describe('the decision input statement on PostgreSQL', () => {
  let db: Database;
  const cluster = randomUUID();
  const profile = randomUUID();

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 1 });
    const q = (sql: string, params: unknown[]) => db.dataSource.query(sql, params);
    await q(`INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, 'p', 'os.nova.server-1.0', $2, 'p', 'u', now())`, [
      profile,
      { type: 'os.nova.server', version: '1.0', properties: { flavor: 'm1.tiny', image: 'cirros' } },
    ]);
    const zones = randomUUID();
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'zones', 'senlin.policy.zone_placement-1.0', $2, 'p', 'u', now())`, [
      zones,
      { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } },
    ]);
    await q(
      `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
       VALUES ($1, 'c', $2, 'p', 'u', 0, -1, 20, 3600, 'ACTIVE')`,
      [cluster, profile],
    );
    await q(`INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, true, 300, '{}', now())`, [
      randomUUID(),
      cluster,
      zones,
    ]);
    for (let i = 0; i < 20; i++) {
      await q(
        `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", physical_id, index, status, data, metadata, created_at)
         VALUES ($1, $2, $3, $4, 'p', 'u', $5, $6, 'ACTIVE', $7, '{}', now())`,
        [randomUUID(), `n${i}`, cluster, profile, `srv-${i}`, i + 1, { placement: { zone: i % 2 ? 'az2' : 'az1' } }],
      );
    }
    await q('ANALYZE', []);
  });
  afterAll(async () => {
    await db?.close();
  });

  const plans = async (marker: string): Promise<{ generic_plans: number; custom_plans: number }> => {
    const rows: Array<{ generic_plans: string; custom_plans: string }> = await db.dataSource.query(
      `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE $1`,
      [`%${marker}%`],
    );
    expect(rows).toHaveLength(1);
    return { generic_plans: Number(rows[0].generic_plans), custom_plans: Number(rows[0].custom_plans) };
  };

  it('a scale-out reads its input with a prepared statement planned five times in twenty decisions', async () => {
    const now = new Date();
    for (let i = 0; i < 20; i++) {
      const action = { id: randomUUID(), action: 'CLUSTER_SCALE_OUT', cluster_id: cluster, target: cluster, inputs: { count: 1 }, data: {}, project: 'p' } as unknown as ActionEntity;
      const snapshot = await loadSnapshot(db.dataSource.manager, action, 'pre_op', now);
      expect(snapshot.cluster?.summary?.node_count).toBe(20);
    }
    // the cluster statement with the zone counts: named (it is in the view at all), and on its generic plan after the first five
    expect(await plans('AS zone_counts')).toEqual({ custom_plans: 5, generic_plans: 15 });
  });
});
