import { createLogger } from '@trellis/common';
import { QueryLogger } from './query-logger';

describe('QueryLogger (TRELLIS_DB_LOGGING)', () => {
  it('logs each statement and how many values it binds, never the values', () => {
    const lines: string[] = [];
    const log = new QueryLogger(createLogger('test', 'debug', {}, (l) => lines.push(l)));
    log.logQuery('SELECT *\n  FROM receivers WHERE id = $1', ['c0ffee00-secret-credential']);
    log.logQueryError(new Error('boom'), 'UPDATE x SET a = $1', { a: 'c0ffee00-secret-credential' });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'info', msg: 'query', sql: 'SELECT * FROM receivers WHERE id = $1', parameters: 1 }),
      expect.objectContaining({ level: 'warn', msg: 'query failed', sql: 'UPDATE x SET a = $1', parameters: 1, error: 'boom' }),
    ]);
    expect(lines.join('\n')).not.toContain('secret-credential');
  });
});
