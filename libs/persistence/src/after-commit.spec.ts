import { openTestDatabase } from '@trellis/testing/database';
import type { Database } from './database';
import { afterCommit } from './after-commit';
import { inTransaction } from './transaction';

describe('afterCommit', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());

  it('runs once the transaction committed, not before', async () => {
    const ran: string[] = [];
    await inTransaction(db.dataSource, async (m) => {
      afterCommit(m, () => ran.push('committed'));
      await m.query('SELECT 1');
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['committed']);
  });

  it('never runs for a transaction that rolled back, nor for a savepoint rolled back inside one', async () => {
    const ran: string[] = [];
    await expect(
      inTransaction(db.dataSource, async (m) => {
        afterCommit(m, () => ran.push('rolled back'));
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await inTransaction(db.dataSource, async (m) => {
      afterCommit(m, () => ran.push('outer'));
      await m
        .transaction(async (inner) => {
          afterCommit(inner, () => ran.push('savepoint'));
          throw new Error('savepoint rolled back');
        })
        .catch(() => undefined);
      await m.transaction(async (inner) => afterCommit(inner, () => ran.push('released savepoint')));
    });
    expect(ran).toEqual(['outer', 'released savepoint']);
  });

  it('runs at once outside a transaction, and a throwing callback does not undo the commit', async () => {
    const ran: string[] = [];
    afterCommit(db.dataSource.manager, () => ran.push('now'));
    expect(ran).toEqual(['now']);
    await inTransaction(db.dataSource, async (m) => {
      afterCommit(m, () => {
        throw new Error('observer broke');
      });
      afterCommit(m, () => ran.push('next'));
    });
    expect(ran).toEqual(['now', 'next']);
  });
});
