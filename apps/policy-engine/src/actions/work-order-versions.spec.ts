import { randomUUID } from 'node:crypto';
import { RoutingKeys, ServiceBinaries, WORK_ORDER_SCHEMA_VERSION } from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import { ServiceHeartbeat, acceptedVersionsOf, listServices, type Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import type { DataSource } from 'typeorm';
import { WorkOrderVersions, commonWorkOrderVersion } from './work-order-versions';

const worker = (versions: number[] | null) => ({ id: randomUUID(), host: 'h', versions });

function recordingLogger(): Logger & { lines: Array<[string, string, Record<string, unknown> | undefined]> } {
  const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push([level, message, fields]);
  const logger = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger & { lines: typeof lines };
  (logger as unknown as { child: () => Logger }).child = () => logger;
  return logger;
}

describe('commonWorkOrderVersion: the newest work order version every nova-worker up takes', () => {
  it('is this release\'s when every worker takes it, or when no worker is up', () => {
    expect(WORK_ORDER_SCHEMA_VERSION).toBe(2);
    expect(commonWorkOrderVersion([])).toBe(2);
    expect(commonWorkOrderVersion([worker([1, 2]), worker([1, 2, 3])])).toBe(2);
  });

  it('is version 1 while one worker up is of the release before (its row names no versions)', () => {
    expect(commonWorkOrderVersion([worker([1, 2]), worker(null)])).toBe(1);
    expect(commonWorkOrderVersion([worker([1])])).toBe(1);
  });

  it('is the oldest this engine writes when the workers have no version in common with it', () => {
    expect(commonWorkOrderVersion([worker([3])])).toBe(1);
    expect(commonWorkOrderVersion([worker([2]), worker([1])], [1, 2])).toBe(1);
  });
});

describe('WorkOrderVersions: what the engine writes, from services.accepts', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db?.close());
  afterEach(() => db.dataSource.query('DELETE FROM services'));

  const olderWorker = (updatedAgo = '0 seconds') =>
    db.dataSource.query(
      `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at)
       VALUES ($1, $2, 'old-host', 'trellis.nova-worker.orders', false, now() - interval '1 hour', now() - $3::interval)`,
      [randomUUID(), ServiceBinaries.novaWorker, updatedAgo],
    );

  it('a nova-worker registers the versions it takes; GET /v1/services shows the row as before', async () => {
    const beat = await ServiceHeartbeat.start(db.dataSource, { binary: ServiceBinaries.novaWorker, topic: 'q', accepts: { [RoutingKeys.workOrder]: [1, 2] } }, recordingLogger(), 60_000);
    expect(await acceptedVersionsOf(db.dataSource, ServiceBinaries.novaWorker, RoutingKeys.workOrder)).toEqual([{ id: beat.id, host: expect.any(String), versions: [1, 2] }]);
    // another message type, or another binary: nothing named
    expect(await acceptedVersionsOf(db.dataSource, ServiceBinaries.novaWorker, RoutingKeys.workResult)).toEqual([{ id: beat.id, host: expect.any(String), versions: null }]);
    expect(await acceptedVersionsOf(db.dataSource, ServiceBinaries.policyEngine, RoutingKeys.workOrder)).toEqual([]);
    const [view] = await listServices(db.dataSource.manager);
    expect(Object.keys(view).sort()).toEqual(['binary', 'disabled_reason', 'host', 'id', 'state', 'status', 'topic', 'updated_at']);
    await beat.stop();
  });

  it('reads a row whose versions are not a list of integers as naming none (version 1), never failing the look', async () => {
    for (const accepts of ['{"work.order": "1,2"}', '{"work.order": [1.5, 2]}', '{"work.order": null}', '[]', '"x"']) {
      await db.dataSource.query(
        `INSERT INTO services (id, "binary", host, topic, disabled, accepts, created_at, updated_at) VALUES ($1, $2, 'odd', 'q', false, $3::jsonb, now(), now())`,
        [randomUUID(), ServiceBinaries.novaWorker, accepts],
      );
    }
    const read = await acceptedVersionsOf(db.dataSource, ServiceBinaries.novaWorker, RoutingKeys.workOrder);
    expect(read.map((w) => w.versions)).toEqual([null, null, null, null, null]);
    const versions = new WorkOrderVersions(db.dataSource, recordingLogger());
    await versions.refresh();
    expect(versions.current).toBe(1);
  });

  it('writes version 1 while a worker of the release before is up, and version 2 once it is gone or down', async () => {
    const logger = recordingLogger();
    const beat = await ServiceHeartbeat.start(db.dataSource, { binary: ServiceBinaries.novaWorker, topic: 'q', accepts: { [RoutingKeys.workOrder]: [1, 2] } }, logger, 60_000);
    const versions = new WorkOrderVersions(db.dataSource, logger);
    await versions.refresh();
    expect(versions.current).toBe(2);

    await olderWorker();
    await versions.refresh();
    expect(versions.current).toBe(1);
    expect(logger.lines.filter(([level]) => level === 'info')).toEqual([
      [
        'info',
        expect.stringMatching(/^writing work orders in an older schema_version: a nova-worker that is up does not take the newer one/),
        { schema_version: 1, previous: 2, workers_up: 2, older_workers: [{ id: expect.any(String), host: 'old-host', takes: [1] }] },
      ],
    ]);

    // the older worker stopped renewing its row (killed): down after 30 s, and no longer counted
    await db.dataSource.query(`UPDATE services SET updated_at = now() - interval '31 seconds' WHERE host = 'old-host'`);
    await versions.refresh();
    expect(versions.current).toBe(2);
    expect(logger.lines.at(-1)).toEqual(['info', expect.stringMatching(/^writing work orders in the newer schema_version: every nova-worker that is up takes it/), expect.objectContaining({ schema_version: 2, previous: 1, workers_up: 1 })]);
    await beat.stop();
  });

  it('keeps what it wrote when it cannot read the rows, saying so', async () => {
    const logger = recordingLogger();
    let down = false;
    const flaky = { query: (sql: string, params: unknown[]) => (down ? Promise.reject(new Error('connection terminated')) : db.dataSource.query(sql, params)) } as unknown as DataSource;
    await olderWorker();
    const versions = new WorkOrderVersions(flaky, logger);
    await versions.refresh();
    expect(versions.current).toBe(1);
    down = true;
    await db.dataSource.query('DELETE FROM services');
    await versions.refresh();
    expect(versions.current).toBe(1);
    expect(logger.lines.at(-1)).toEqual(['warn', expect.stringMatching(/^could not read which work order versions/), { schema_version: 1, error: 'Error: connection terminated' }]);
    down = false;
    await versions.refresh();
    expect(versions.current).toBe(2);
  });

  it('looks again every interval once started, until stopped', async () => {
    const versions = new WorkOrderVersions(db.dataSource, recordingLogger(), 50);
    await versions.start();
    expect(versions.current).toBe(2);
    await olderWorker();
    for (let i = 0; i < 100 && versions.current !== 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(versions.current).toBe(1);
    versions.stop();
    await db.dataSource.query('DELETE FROM services');
    await new Promise((r) => setTimeout(r, 200));
    expect(versions.current).toBe(1);
  });
});
