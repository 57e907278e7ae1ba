import { randomUUID } from 'node:crypto';
import { loadConfig, silentLogger } from '@trellis/common';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { RetentionJob } from './retention-job';

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

describe('RetentionJob', () => {
  let db: Database;
  beforeEach(async () => {
    db = await openTestDatabase();
  });
  afterEach(() => db.close());

  const count = async (table: string) => ((await db.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`)) as Array<{ n: number }>)[0].n;

  it('prunes each kind at its configured age and leaves alone a kind kept forever', async () => {
    for (const age of [9, 3]) {
      await db.dataSource.query(`INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ('engine', $1, $2)`, [randomUUID(), daysAgo(age)]);
      await db.dataSource.query(`INSERT INTO events (id, "timestamp", otype, level, "user", project) VALUES ($1, $2, 'CLUSTER', 20, 'u', 'p')`, [
        randomUUID(),
        daysAgo(age * 100),
      ]);
    }
    const settings = loadConfig({ TRELLIS_RETAIN_EVENTS_DAYS: '0' }).retention;

    const deleted = await new RetentionJob(db.dataSource, silentLogger, settings).pruneOnce();

    expect(deleted.processed_messages).toEqual({ processed_messages: 1 });
    expect(deleted.events).toBeUndefined();
    expect(await count('processed_messages')).toBe(1);
    expect(await count('events')).toBe(2);
  });

  it('does not run in the background when the interval is 0', async () => {
    jest.useFakeTimers();
    try {
      const job = new RetentionJob(db.dataSource, silentLogger, loadConfig({ TRELLIS_RETENTION_INTERVAL_SECONDS: '0' }).retention);
      const round = jest.spyOn(job, 'pruneOnce');
      job.start();
      jest.advanceTimersByTime(7 * 86_400_000);
      expect(round).not.toHaveBeenCalled();
      await job.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('runs its first round a minute after start, then every interval', async () => {
    jest.useFakeTimers();
    try {
      const job = new RetentionJob(db.dataSource, silentLogger, loadConfig({ TRELLIS_RETENTION_INTERVAL_SECONDS: '3600' }).retention);
      const round = jest.spyOn(job, 'pruneOnce').mockResolvedValue({});
      job.start();
      jest.advanceTimersByTime(59_000);
      expect(round).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1_000);
      expect(round).toHaveBeenCalledTimes(1);
      await Promise.resolve();
      await Promise.resolve();
      jest.advanceTimersByTime(3_600_000);
      expect(round).toHaveBeenCalledTimes(2);
      await job.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
