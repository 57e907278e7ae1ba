import { checkFixedColumns } from './prepared';

describe('checkFixedColumns: prepared statements name their result columns', () => {
  it.each([
    'SELECT * FROM nodes WHERE id = $1',
    'select  *  from nodes',
    'SELECT DISTINCT * FROM nodes',
    'SELECT n.* FROM nodes n',
    'SELECT "n".* FROM nodes n',
    'SELECT id, n.* FROM nodes n',
    'SELECT id,* FROM nodes',
    'UPDATE nodes SET status = $2 WHERE id = $1 RETURNING *',
    'INSERT INTO outbox (id) VALUES ($1)\n  RETURNING\n    *',
    'WITH a AS (SELECT * FROM actions) SELECT id FROM a',
    'SELECT * FROM unnest_log',
  ])('refuses %j', (text) => {
    expect(() => checkFixedColumns(text)).toThrow(/takes every column of a table; name the columns/);
  });

  it.each([
    'SELECT id, status FROM nodes WHERE id = $1',
    'SELECT count(*) AS n FROM nodes',
    'SELECT count(*)::int, sum(a * b) FROM t',
    'SELECT id FROM nodes WHERE weight * 2 > $1',
    'UPDATE nodes SET index = index * 2 WHERE id = $1 RETURNING id, status',
    'SELECT 2 * 3',
    'WITH i AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS t(id, kind)) UPDATE nodes n SET status = i.kind FROM i WHERE n.id = i.id',
    'SELECT * FROM (SELECT id, index FROM nodes WHERE cluster_id = $1) c ORDER BY c.index',
  ])('takes %j', (text) => {
    expect(() => checkFixedColumns(text)).not.toThrow();
  });

  it('names what it refuses', () => {
    expect(() => checkFixedColumns('UPDATE nodes SET status = $1 RETURNING  *')).toThrow("hotQuery: 'RETURNING *' takes every column");
  });
});
