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

/** The migrations of this release against what a database records (`trellis migrate`, the services' start). */
export interface MigrationStatus {
  /** this release's migrations the database has applied, in order */
  applied: string[];
  /** this release's migrations the database has not applied, in the order they run */
  pending: string[];
  /** applied migrations this release does not know: a newer release's (a rollback), harmless when additive */
  unknown: string[];
}

/** What `dataSource`'s database has applied of this release's migrations (nothing is changed). */
export async function migrationStatus(dataSource: DataSource): Promise<MigrationStatus> {
  const known = dataSource.migrations.map((m) => m.name ?? m.constructor.name);
  // TypeORM's own read of its table: no table yet is nothing applied (it creates none)
  const executed = await new MigrationExecutor(dataSource).getExecutedMigrations();
  const done = new Set(executed.map((m) => m.name));
  const mine = new Set(known);
  return {
    applied: known.filter((n) => done.has(n)),
    pending: known.filter((n) => !done.has(n)),
    // in the order they ran (TypeORM lists the newest first)
    unknown: executed.map((m) => m.name).filter((n) => !mine.has(n)).reverse(),
  };
}

/** A service started with TRELLIS_MIGRATE_ON_START=false on a database that lacks some of this release's migrations. */
export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `the database lacks ${pending.length} migration${pending.length === 1 ? '' : 's'} this release needs (${pending.join(', ')}), ` +
        'and TRELLIS_MIGRATE_ON_START is false: run `trellis migrate` with this release first',
    );
    this.name = 'PendingMigrationsError';
  }
}
