import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import { openTestDatabase } from '@trellis/testing/database';
import type { Database } from './database';
import { ServiceHeartbeat, deploymentStats } from './service-registry';

describe('deploymentStats (the gauges trellis_actions_unfinished and trellis_components)', () => {
  let db: Database;
  beforeEach(async () => {
    db = await openTestDatabase();
  });
  afterEach(() => db.close());

  const action = (status: string) =>
    db.dataSource.query(
      `INSERT INTO actions (id, name, cluster_id, target, action, cause, timeout, status, project, "user", created_at)
       VALUES ($1, 'a', $2, $2, 'CLUSTER_SCALE_OUT', 'RPC Request', 3600, $3, 'p', 'u', now())`,
      [randomUUID(), randomUUID(), status],
    );

  it('counts the unfinished actions per status, every unfinished status listed, the ended ones left out', async () => {
    for (const status of ['READY', 'READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']) await action(status);
    expect((await deploymentStats(db.dataSource)).unfinishedActions).toEqual({ READY: 2, WAITING: 0, RUNNING: 1, WAITING_LIFECYCLE_COMPLETION: 0 });
  });

  it('counts the registered components per binary, up or down by the database clock; the three binaries always there', async () => {
    const engine = await ServiceHeartbeat.start(db.dataSource, { binary: 'trellis-policy-engine', topic: 'q' }, silentLogger, 60_000);
    await db.dataSource.query(
      `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at)
       VALUES ($1, 'trellis-policy-engine', 'h', 't', false, now() - interval '2 hours', now() - interval '1 hour'),
              ($2, 'trellis-nova-worker', 'h', 't', false, now() - interval '2 hours', now() - interval '1 minute')`,
      [randomUUID(), randomUUID()],
    );
    const { components } = await deploymentStats(db.dataSource);
    expect(components.sort((a, b) => `${a.binary}/${a.state}`.localeCompare(`${b.binary}/${b.state}`))).toEqual([
      { binary: 'trellis-gateway', state: 'down', count: 0 },
      { binary: 'trellis-gateway', state: 'up', count: 0 },
      { binary: 'trellis-nova-worker', state: 'down', count: 1 },
      { binary: 'trellis-nova-worker', state: 'up', count: 0 },
      { binary: 'trellis-policy-engine', state: 'down', count: 1 },
      { binary: 'trellis-policy-engine', state: 'up', count: 1 },
    ]);
    await engine.stop();
  });
});
