import { createLogger, loadConfig } from '@trellis/common';
import { migrationStatus, openDatabase, runMigrationsLocked } from '@trellis/persistence';
import { booleanOption, missingSetting, runCommand, type CommandSpec } from './args';

export const MIGRATE_COMMAND: CommandSpec = {
  name: 'migrate',
  summary: "Apply this release's database migrations now (Senlin's `senlin-manage db_sync`), or with --check list those pending.",
  options: {
    check: { type: 'boolean', help: 'apply nothing: report, and exit with status 1 when a migration is pending' },
  },
  notes: [
    'The services apply pending migrations when they start, unless TRELLIS_MIGRATE_ON_START is false; then they',
    "refuse to start until this has run (README \"Upgrading a running deployment\"). Runs under the services'",
    'advisory lock, so it may run while they start. Prints a JSON report: applied_now, pending, unknown (applied',
    'migrations this release does not know: a newer release ran them) and latest. Needs DATABASE_URL.',
  ],
};

export interface MigrateReport {
  check: boolean;
  /** the migrations this run applied, in order */
  applied_now: string[];
  /** this release's migrations still not applied */
  pending: string[];
  /** applied migrations this release does not know */
  unknown: string[];
  /** the last of this release's migrations the database has */
  latest: string | null;
}

/** `trellis migrate [--check]` */
export function runMigrate(args: string[]): Promise<number> {
  return runCommand(MIGRATE_COMMAND, args, async (parsed) => {
    const config = loadConfig();
    if (!config.database.url) {
      return missingSetting(
        'migrate',
        'DATABASE_URL to the PostgreSQL the services use',
        'The embedded default (PGlite) applies its migrations when it starts.',
      );
    }
    const check = booleanOption(parsed, 'check');
    const logger = createLogger('trellis-migrate', config.logLevel);
    const database = await openDatabase(config.database, logger, { migrations: 'none' });
    try {
      const appliedNow = check ? [] : await runMigrationsLocked(database.dataSource, logger);
      const status = await migrationStatus(database.dataSource);
      const report: MigrateReport = {
        check,
        applied_now: appliedNow,
        pending: status.pending,
        unknown: status.unknown,
        latest: status.applied.at(-1) ?? null,
      };
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      return status.pending.length > 0 ? 1 : 0;
    } finally {
      await database.close();
    }
  });
}
