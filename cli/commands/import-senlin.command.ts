import { readFileSync } from 'node:fs';
import { createLogger, loadConfig, usesSimulator } from '@trellis/common';
import { createNovaClient } from '@trellis/nova';
import { openDatabase, redactUrl } from '@trellis/persistence';
import { renderReport } from '../import-senlin/import-report';
import { importSenlin, type ImportReport } from '../import-senlin/import-senlin';
import { parseSenlinUrl, readSenlin, redactDbUrl } from '../import-senlin/senlin-source';
import { UsageError, booleanOption, listOption, runCommand, stringOption, type CommandSpec } from './args';

export const IMPORT_SENLIN_COMMAND: CommandSpec = {
  name: 'import-senlin',
  summary: "Adopt a Senlin 14 deployment's profiles, policies, clusters, nodes, bindings and receivers into Trellis, reading Senlin's database.",
  options: {
    from: {
      type: 'string',
      value: 'URL|@FILE',
      help: "Senlin's database: mysql://USER:PASSWORD@HOST:3306/senlin, or @FILE to read the URL from a file (keeps the password out of the process list) (required)",
    },
    project: { type: 'string', multiple: true, value: 'ID', help: 'only objects of this project' },
    cluster: { type: 'string', multiple: true, value: 'ID|NAME', help: 'only this cluster with its nodes, profiles, bindings and receivers' },
    'dry-run': { type: 'boolean', help: 'print what would be imported and what cannot be, and write nothing' },
    force: { type: 'boolean', help: "also import clusters with actions Senlin had not finished (Senlin's engine must be stopped)" },
    json: { type: 'boolean', help: 'print the report as JSON' },
  },
  notes: [
    "Writes Trellis's database (DATABASE_URL, or the embedded default's TRELLIS_DATA_DIR while Trellis is stopped),",
    "one transaction per cluster; keeps Senlin's ids, names, owners, indexes, metadata, times and physical_ids.",
    "Reads Nova with Trellis's service identity (OS_*) to check every node's server and record its zone and host;",
    'it never creates, changes or deletes anything in Nova or in Senlin. Running it again imports nothing new.',
    'Exit status: 0 all selected objects are in Trellis (or would be), 4 some are not carried over (listed),',
    "1 a cluster failed to import, 3 refused because Senlin's engine is running. docs/MIGRATING-FROM-SENLIN.md.",
  ],
};

export const IMPORT_EXIT = { ok: 0, failed: 1, usage: 2, refused: 3, partial: 4 } as const;

export function exitStatusOf(report: ImportReport): number {
  switch (report.outcome) {
    case 'refused':
      return IMPORT_EXIT.refused;
    case 'failed':
      return IMPORT_EXIT.failed;
    case 'partial':
      return IMPORT_EXIT.partial;
    default:
      return IMPORT_EXIT.ok;
  }
}

function readUrlFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new UsageError(`--from @${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** `trellis import-senlin`: see IMPORT_SENLIN_COMMAND and docs/MIGRATING-FROM-SENLIN.md. */
export function runImportSenlin(args: string[]): Promise<number> {
  return runCommand(IMPORT_SENLIN_COMMAND, args, async (parsed) => {
    if (args.filter((a) => a === '--from' || a.startsWith('--from=')).length > 1) throw new UsageError('--from is given more than once: name one Senlin database');
    for (const name of ['project', 'cluster']) {
      if (listOption(parsed, name).some((v) => v.trim() === '' || /[\x00-\x1f\x7f]/.test(v))) throw new UsageError(`--${name} takes an id: not empty, no control characters`);
    }
    const fromText = stringOption(parsed, 'from');
    if (!fromText) throw new UsageError("--from is required: Senlin's database, e.g. mysql://senlin:PASSWORD@127.0.0.1:3306/senlin");
    const from = parseSenlinUrl(fromText.startsWith('@') ? readUrlFile(fromText.slice(1)) : fromText);
    const config = loadConfig();
    if (usesSimulator(config)) {
      throw new UsageError(
        "set OS_AUTH_URL (or OS_CLOUD) and Trellis's service credentials (OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, …): " +
          "the importer reads every node's server from the Nova that Senlin used",
      );
    }
    const logger = createLogger('trellis-import-senlin', config.logLevel);
    const rows = await readSenlin(from);
    const database = await openDatabase(config.database, logger);
    try {
      const report = await importSenlin(
        rows,
        {
          projects: listOption(parsed, 'project'),
          clusters: listOption(parsed, 'cluster'),
          force: booleanOption(parsed, 'force'),
          dryRun: booleanOption(parsed, 'dry-run'),
        },
        createNovaClient(config.openstack),
        database.dataSource,
      );
      const target = config.database.url ? redactUrl(config.database.url) : `PGlite in ${config.database.dataDir}`;
      if (booleanOption(parsed, 'json')) process.stdout.write(JSON.stringify({ ...report, trellis_database: target }, null, 2) + '\n');
      else process.stdout.write(`Trellis database ${target}\n` + renderReport(report, redactDbUrl(from.href)));
      return exitStatusOf(report);
    } finally {
      await database.close();
    }
  });
}
