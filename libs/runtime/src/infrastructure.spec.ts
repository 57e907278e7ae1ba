import { silentLogger, type Logger } from '@trellis/common';
import type { DataSource } from 'typeorm';
import { startHeartbeatOrClose, startWhileDatabaseUnavailable } from './infrastructure';

const tooManyClients = () => Object.assign(new Error('sorry, too many clients already'), { code: '53300' });

describe('startWhileDatabaseUnavailable', () => {
  it('starts again while the database is unavailable, and says so each time', async () => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg: string) => void warnings.push(msg) };
    let calls = 0;
    const started = await startWhileDatabaseUnavailable(
      logger,
      'nova-worker',
      async () => {
        calls++;
        if (calls < 3) throw tooManyClients();
        return 'running';
      },
      { maxMs: 1_000, intervalMs: 10 },
    );
    expect(started).toBe('running');
    expect(calls).toBe(3);
    expect(warnings).toEqual([
      'nova-worker could not start yet: the database is unavailable; trying again',
      'nova-worker could not start yet: the database is unavailable; trying again',
    ]);
  });

  it('throws any other error at once', async () => {
    let calls = 0;
    const start = async () => {
      calls++;
      throw new Error('relation "nodes" does not exist');
    };
    await expect(startWhileDatabaseUnavailable(silentLogger, 'gateway', start, { maxMs: 1_000, intervalMs: 10 })).rejects.toThrow('relation "nodes" does not exist');
    expect(calls).toBe(1);
  });

  it('gives up with the database error once the wait is over', async () => {
    let calls = 0;
    const start = async () => {
      calls++;
      throw tooManyClients();
    };
    // a window of 1 s with retries every 300 ms: 3 or 4 attempts, and at least 2 however slowly the
    // first one fails (100 ms and 30 ms left one attempt when a loaded machine took 70 ms for the first)
    await expect(startWhileDatabaseUnavailable(silentLogger, 'policy-engine', start, { maxMs: 1_000, intervalMs: 300 })).rejects.toThrow('sorry, too many clients already');
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThanOrEqual(5);
  });
});

describe('startHeartbeatOrClose', () => {
  it('closes the started application when the first heartbeat cannot be written, and passes the error on', async () => {
    let closed = 0;
    const app = { close: async () => void closed++ };
    const refusing = { query: async () => Promise.reject(tooManyClients()) } as unknown as DataSource;
    await expect(startHeartbeatOrClose(app, refusing, { binary: 'trellis-nova-worker', topic: 'orders' }, silentLogger)).rejects.toThrow('sorry, too many clients already');
    expect(closed).toBe(1);
  });
});
