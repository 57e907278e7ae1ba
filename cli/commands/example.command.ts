import { resolve } from 'node:path';
import { API_TARGET_OPTIONS, apiTarget } from './api-target';
import { booleanOption, runCommand, UsageError, type CommandSpec, type ParsedCommand } from './args';
import { watchAction } from './action-watch';
import { formatReport, listExamples, runExample } from './example-runner';
import { TrellisApi } from './trellis-api';

/** the repository root: cli/commands → up two in source, up three from dist/cli/commands (dist/ holds no example.yaml) */
const ROOT_CANDIDATES = [resolve(__dirname, '../..'), resolve(__dirname, '../../..')];

export const EXAMPLE_COMMAND: CommandSpec = {
  name: 'example',
  summary: 'Run a walkthrough of examples/ (affinity, zone-placement, role-anti-affinity) against the running Trellis and check where the servers landed.',
  positionals: { usage: 'NAME', min: 0, max: 1 },
  options: {
    ...API_TARGET_OPTIONS,
    keep: { type: 'boolean', help: 'keep the cluster, policies and profile afterwards' },
    watch: { type: 'boolean', help: "show each action's progress while it runs, as 'trellis watch' does (on stderr)" },
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
  const { apiUrl, token } = await apiTarget(parsed);
  const watcher = new TrellisApi({ apiUrl, token });
  const report = await runExample(root, name, {
    apiUrl,
    token,
    cleanUp: !booleanOption(parsed, 'keep'),
    log: (line) => process.stderr.write(`  ${line}\n`),
    follow: booleanOption(parsed, 'watch') ? (id) => watchAction(watcher, id, { out: process.stderr, intervalMs: 500 }) : undefined,
  });
  process.stdout.write(formatReport(report) + '\n');
  return report.failures.length ? 1 : 0;
}
