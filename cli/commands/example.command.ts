import { resolve } from 'node:path';
import { loadConfig } from '@trellis/common';
import { booleanOption, runCommand, stringOption, UsageError, type CommandSpec, type ParsedCommand } from './args';
import { formatReport, listExamples, runExample } from './example-runner';
import { readRunningInstance } from './running-instance';
import { tokenFor } from './token.command';

/** the repository root: cli/commands → up two in source, up three from dist/cli/commands (dist/ holds no example.yaml) */
const ROOT_CANDIDATES = [resolve(__dirname, '../..'), resolve(__dirname, '../../..')];

export const EXAMPLE_COMMAND: CommandSpec = {
  name: 'example',
  summary: 'Run a walkthrough of examples/ (affinity, zone-placement, role-anti-affinity) against the running Trellis and check where the servers landed.',
  positionals: { usage: 'NAME', min: 0, max: 1 },
  options: {
    user: { type: 'string', value: 'NAME', help: "the simulator's user to run it as (default demo); with a cloud set, the OS_* credentials" },
    api: { type: 'string', value: 'URL', help: 'the Trellis API (default: the embedded default running from this directory, else TRELLIS_PUBLIC_URL or http://127.0.0.1:TRELLIS_PORT)' },
    keep: { type: 'boolean', help: 'keep the cluster, policies and profile afterwards' },
  },
  notes: ['Without NAME, lists the examples. Exit status 0 when the servers landed as the example says, 1 when not.'],
};

export function runExampleCommand(args: string[]): Promise<number> {
  return runCommand(EXAMPLE_COMMAND, args, run);
}

async function run(parsed: ParsedCommand): Promise<number> {
  const root = ROOT_CANDIDATES.find((r) => {
    try {
      return listExamples(r).length > 0;
    } catch {
      return false;
    }
  });
  if (!root) throw new Error('cannot find the examples/ folder of this Trellis');
  const name = parsed.positionals[0];
  if (name === undefined) {
    process.stdout.write(listExamples(root).join('\n') + '\n');
    return 0;
  }
  if (!listExamples(root).includes(name)) throw new UsageError(`no example '${name}' (known: ${listExamples(root).join(', ')})`);
  const config = loadConfig();
  const apiUrl =
    stringOption(parsed, 'api') ?? readRunningInstance(config.database.dataDir)?.api_url ?? config.http.publicUrl ?? `http://127.0.0.1:${config.http.port}`;
  const token = await tokenFor(config, stringOption(parsed, 'user'));
  const report = await runExample(root, name, {
    apiUrl: apiUrl.replace(/\/+$/, ''),
    token,
    cleanUp: !booleanOption(parsed, 'keep'),
    log: (line) => process.stderr.write(`  ${line}\n`),
  });
  process.stdout.write(formatReport(report) + '\n');
  return report.failures.length ? 1 : 0;
}
