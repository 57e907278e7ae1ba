import { DataSource, MigrationExecutor } from 'typeorm';
import type { Logger } from '@trellis/common';

/**
 * TypeORM takes no lock of its own around migrations, so two services starting at once against one
 * PostgreSQL would both create the migrations table and both run the first migration. A session-level
 * advisory lock, held on the same connection that runs the migrations, makes the second one wait and
 * then find nothing pending. The lock is released when that connection ends, even after a crash.
 */
export const MIGRATION_LOCK_SQL = `SELECT pg_advisory_lock(hashtext('trellis:migrations'))`;
const MIGRATION_UNLOCK_SQL = `SELECT pg_advisory_unlock(hashtext('trellis:migrations'))`;

/** Runs the pending migrations, each in its own transaction, and returns the names of those it ran. */
export async function runMigrationsLocked(dataSource: DataSource, logger: Logger): Promise<string[]> {
  const queryRunner = dataSource.createQueryRunner();
  await queryRunner.connect();
  try {
    await queryRunner.query(MIGRATION_LOCK_SQL);
    try {
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'each';
      const ran = await executor.executePendingMigrations();
      const names = ran.map((m) => m.name);
      if (names.length > 0) logger.info('database migrations applied', { migrations: names });
      return names;
    } finally {
      // a failed unlock means the connection is gone, and the lock went with it
      await queryRunner.query(MIGRATION_UNLOCK_SQL).catch(() => undefined);
    }
  } finally {
    await queryRunner.release();
  }
}
