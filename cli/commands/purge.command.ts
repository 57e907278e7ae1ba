import { createLogger, loadConfig, type TrellisConfig } from '@trellis/common';
import { RETENTION_KINDS, openDatabase, pruneOlderThan, type PruneCounts, type RetentionKind } from '@trellis/persistence';
import { UsageError, booleanOption, missingSetting, runCommand, stringOption, type CommandSpec, type ParsedCommand } from './args';

/** the flag that sets each kind's age */
const AGE_FLAGS: Record<RetentionKind, string> = {
  processed_messages: 'processed-older-than',
  events: 'events-older-than',
  actions: 'actions-older-than',
  decisions: 'decisions-older-than',
  services: 'services-older-than',
};

export const PURGE_COMMAND: CommandSpec = {
  name: 'purge',
  summary: "Delete old events, finished actions, decisions, processed-message ids and dead services' registrations now (as the engine does in the background).",
  options: {
    'events-older-than': { type: 'string', value: 'AGE', help: 'events older than AGE (e.g. 30d, 12h, 90m, 3600s)' },
    'actions-older-than': { type: 'string', value: 'AGE', help: 'finished actions older than AGE, with their steps and decision' },
    'decisions-older-than': { type: 'string', value: 'AGE', help: 'decisions of finished actions older than AGE' },
    'processed-older-than': { type: 'string', value: 'AGE', help: 'ids of consumed messages recorded more than AGE ago' },
    'services-older-than': { type: 'string', value: 'AGE', help: "registrations of services that stopped renewing them more than AGE ago (shown down; never a running one's)" },
    'dry-run': { type: 'boolean', help: 'count what would be deleted, delete nothing' },
  },
  notes: [
    'With no --*-older-than flag every kind is purged at its configured age (TRELLIS_RETAIN_*_DAYS, README',
    '"Retention"); with some, only those kinds. Never deleted: unfinished actions, actions whose work the',
    "nova-worker is still doing, an existing cluster's latest action and latest decision, the registration of a",
    'service that renewed it within the last 30 s. Needs DATABASE_URL.',
  ],
};

export interface PurgeReport {
  dry_run: boolean;
  purged: Array<{ kind: RetentionKind; older_than: string; before: string; rows: PruneCounts }>;
}

/** `30d`, `12h`, `90m`, `3600s` → seconds */
export function parseAge(flag: string, text: string): number {
  const m = /^(\d+)([dhms])$/.exec(text.trim());
  if (!m) throw new UsageError(`--${flag} must be a number and a unit (d, h, m or s), e.g. 30d; got '${text}'`);
  return Number(m[1]) * { d: 86_400, h: 3_600, m: 60, s: 1 }[m[2] as 'd' | 'h' | 'm' | 's'];
}

/** which kinds to purge at which age: the flags given, else every kind the configuration keeps for a limited time */
export function purgePlan(parsed: ParsedCommand, config: TrellisConfig): Array<{ kind: RetentionKind; olderThan: string; seconds: number }> {
  const given = RETENTION_KINDS.filter((kind) => stringOption(parsed, AGE_FLAGS[kind]) !== undefined);
  if (given.length) {
    return given.map((kind) => {
      const olderThan = stringOption(parsed, AGE_FLAGS[kind])!;
      return { kind, olderThan, seconds: parseAge(AGE_FLAGS[kind], olderThan) };
    });
  }
  return RETENTION_KINDS.flatMap((kind) => {
    const days = config.retention.days[kind];
    return days === null ? [] : [{ kind, olderThan: `${days}d`, seconds: days * 86_400 }];
  });
}

/** `trellis purge`: Senlin's `senlin-manage event-purge` and `action-purge`, for every kind Trellis keeps. */
export function runPurge(args: string[]): Promise<number> {
  return runCommand(PURGE_COMMAND, args, async (parsed) => {
    const config = loadConfig();
    const plan = purgePlan(parsed, config);
    if (!config.database.url) {
      return missingSetting(
        'purge',
        'DATABASE_URL to the PostgreSQL the services use',
        'With the embedded default, the policy-engine prunes in the background (TRELLIS_RETAIN_*_DAYS).',
      );
    }
    const dryRun = booleanOption(parsed, 'dry-run');
    const database = await openDatabase(config.database, createLogger('trellis-purge', config.logLevel));
    try {
      const now = new Date();
      const report: PurgeReport = { dry_run: dryRun, purged: [] };
      for (const { kind, olderThan, seconds } of plan) {
        const rows = await pruneOlderThan(database.dataSource, kind, {
          olderThanSeconds: seconds,
          batchSize: config.retention.batchSize,
          dryRun,
          now,
        });
        report.purged.push({ kind, older_than: olderThan, before: new Date(now.getTime() - seconds * 1000).toISOString(), rows });
      }
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      return 0;
    } finally {
      await database.close();
    }
  });
}
