import type { Logger } from '@trellis/common';
import { openTestDatabase } from '@trellis/testing/database';
import type { DataSource } from 'typeorm';
import type { Database } from '../database';
import { OutboxRelay } from './outbox-relay';

/**
 * The relay through a database outage (docs/RELIABILITY.md §9): one warning for the streak of failed
 * rounds, one line when a round succeeds again, and a growing wait between tries.
 */
describe('OutboxRelay while the database is away', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db?.close());

  // polling every 20 ms, each try is a round; polling every 300 ms, the relay also wakes between rounds
  // with nothing to do, which is no success (those wake-ups once logged a recovery after each failure)
  it.each([
    { pollIntervalMs: 20, most: 8 },
    { pollIntervalMs: 300, most: 8 },
  ])('logs the first failed round and the recovery once each, and backs off between tries (polling every $pollIntervalMs ms)', async ({ pollIntervalMs, most }) => {
    let down = false;
    let tries = 0;
    const refuse = () => {
      tries++;
      return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    };
    const real = db.dataSource;
    const manager = new Proxy(real.manager, { get: (t, k, r) => (k === 'query' && down ? refuse : Reflect.get(t, k, r)) });
    const flaky = new Proxy(real, {
      get: (t, k, r) => (k === 'manager' ? manager : k === 'query' && down ? refuse : Reflect.get(t, k, r)),
    }) as DataSource;
    const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
    const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push([level, message, fields]);
    const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
    const relay = new OutboxRelay(flaky, async () => undefined, { batchSize: 10, pollIntervalMs, retryBaseMs: 50, logger });
    relay.start();
    try {
      await new Promise((r) => setTimeout(r, 100));
      down = true;
      await new Promise((r) => setTimeout(r, 1_200));
      const triesWhileDown = tries;
      down = false;
      await new Promise((r) => setTimeout(r, 1_500));

      const about = lines.filter(([, m]) => m.startsWith('outbox relay round'));
      expect(about).toEqual([
        ['warn', 'outbox relay round failed', { error: 'connect ECONNREFUSED 127.0.0.1:5432' }],
        ['info', 'outbox relay rounds succeed again', { failures: expect.any(Number), failing_for_s: expect.any(Number) }],
      ]);
      // polled every 20 ms, that would be 60 tries in 1.2 s; waiting 50, 100, 200, 400 ms between them: 5 or so
      expect(triesWhileDown).toBeGreaterThanOrEqual(2);
      expect(triesWhileDown).toBeLessThanOrEqual(most);
      expect(about[1][2]!.failures).toBeGreaterThanOrEqual(triesWhileDown - 1);
    } finally {
      await relay.stop();
    }
  });
});
