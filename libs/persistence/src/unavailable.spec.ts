import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, untilDatabaseAnswers } from './unavailable';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const failedQuery = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connect', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['both addresses of localhost refused', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['the connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['a connect that timed out', new Error('Connection terminated due to connection timeout')],
    ['the pool timing out a connect', new Error('timeout exceeded when trying to connect')],
    ['a closed client', new Error('Client was closed and is not queryable')],
    ['PGlite closed', new Error('PGlite is closed')],
    ['the server shutting down (57P01), wrapped by TypeORM', failedQuery(withCode('terminating connection due to administrator command', '57P01'))],
    ['the server starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['a connection exception (08006)', withCode('connection failure', '08006')],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['a socket error as the cause', new Error('pool failed', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') })],
  ])('is true for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', failedQuery(withCode('duplicate key value violates unique constraint', '23505'))],
    ['a serialization failure (retried, not unavailable)', withCode('could not serialize access', '40001')],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    ['a failed login', withCode('password authentication failed for user "x"', '28P01')],
    ['a message that only mentions a lost connection', new Error('Nova said: Connection terminated unexpectedly')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'Connection terminated'],
    ['nothing', undefined],
  ])('is false for %s', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('untilDatabaseAnswers', () => {
  /** a data source whose first `failures` queries are refused */
  const flaky = (failures: number) => {
    const db = {
      calls: 0,
      query: async () => {
        db.calls += 1;
        if (db.calls <= failures) throw withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');
        return [{ '?column?': 1 }];
      },
    };
    return db;
  };

  it('resolves true once SELECT 1 answers again', async () => {
    const db = flaky(3);
    await expect(untilDatabaseAnswers(db, { intervalMs: 1, maxMs: 10_000 })).resolves.toBe(true);
    expect(db.calls).toBe(4);
  });

  it('gives up with false when the database stays away', async () => {
    const db = flaky(Number.MAX_SAFE_INTEGER);
    await expect(untilDatabaseAnswers(db, { intervalMs: 1, maxMs: 20 })).resolves.toBe(false);
  });

  it('runs one probe for every caller waiting on one data source', async () => {
    const db = flaky(2);
    const all = await Promise.all([1, 2, 3, 4].map(() => untilDatabaseAnswers(db, { intervalMs: 1, maxMs: 10_000 })));
    expect(all).toEqual([true, true, true, true]);
    expect(db.calls).toBe(3);
  });
});
