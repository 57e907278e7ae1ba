import { silentLogger, type Logger } from '@trellis/common';
import type { DataSource } from 'typeorm';
import type { NovaAccess } from '../identity/nova-access';
import { FactsRefresher } from './facts-refresher';

/**
 * The interval refresh while PostgreSQL is away (the fault suite's `pg_ctl stop -m immediate`): a
 * round that cannot store its facts used to reject with nobody listening, and Node ended the
 * nova-worker on the unhandled rejection. Now the round is logged and the next one stores the facts.
 */
describe('FactsRefresher on an interval while the database is down', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('logs a failed round, keeps the process up, and stores the facts once the database answers', async () => {
    let databaseUp = true;
    const stored: string[] = [];
    const dataSource = {
      query: jest.fn(async (sql: string, params?: unknown[]) => {
        if (!databaseUp) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        if (sql.startsWith('INSERT INTO cloud_facts')) stored.push(String(params?.[0]));
        return [];
      }),
    } as unknown as DataSource;
    const access = {
      cloud: { listAvailabilityZones: async () => [{ name: 'az1', available: true, hosts: ['host-1'] }], listHypervisors: async () => [] },
    } as unknown as NovaAccess;
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg: string) => void warnings.push(msg) };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    const refresher = new FactsRefresher(dataSource, access, logger, 15);
    try {
      await refresher.start();
      stored.length = 0;

      databaseUp = false;
      await jest.advanceTimersByTimeAsync(15_000);
      // an unhandled rejection is reported on a later turn of the event loop
      await new Promise((r) => jest.requireActual<typeof import('node:timers')>('node:timers').setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(warnings).toContain('facts refresh failed; the next round tries again');

      databaseUp = true;
      await jest.advanceTimersByTimeAsync(15_000);
      expect(stored).toEqual(expect.arrayContaining(['availability_zones', 'hypervisors']));
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await refresher.stop();
    }
  });
});
