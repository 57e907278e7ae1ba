import 'reflect-metadata';
import { errorMessage } from '@trellis/common';
import type { CommandSpec } from './commands/args';
import { EVALUATE_COMMAND, runEvaluate } from './commands/evaluate.command';
import { EXAMPLE_COMMAND, runExampleCommand } from './commands/example.command';
import { IMPORT_SENLIN_COMMAND, runImportSenlin } from './commands/import-senlin.command';
import { MIGRATE_COMMAND, runMigrate } from './commands/migrate.command';
import { POLICY_DEFAULTS_COMMAND, runPolicyDefaults } from './commands/policy-defaults.command';
import { PURGE_COMMAND, runPurge } from './commands/purge.command';
import { REPLAY_COMMAND, runReplay } from './commands/replay.command';
import { START_COMMAND, runStart } from './commands/start.command';
import { TOKEN_COMMAND, runToken } from './commands/token.command';
import { WATCH_COMMAND, runWatch } from './commands/watch.command';

const COMMANDS: Array<{ spec: CommandSpec; run: (args: string[]) => Promise<number> }> = [
  { spec: START_COMMAND, run: runStart },
  { spec: REPLAY_COMMAND, run: runReplay },
  { spec: PURGE_COMMAND, run: runPurge },
  { spec: MIGRATE_COMMAND, run: runMigrate },
  { spec: EVALUATE_COMMAND, run: runEvaluate },
  { spec: TOKEN_COMMAND, run: runToken },
  { spec: EXAMPLE_COMMAND, run: runExampleCommand },
  { spec: WATCH_COMMAND, run: runWatch },
  { spec: POLICY_DEFAULTS_COMMAND, run: runPolicyDefaults },
  { spec: IMPORT_SENLIN_COMMAND, run: runImportSenlin },
];

/** every command with its flags; `trellis <command> --help` says what each does */
function usage(): string {
  const lines = ['usage: trellis <command> [options]', '', 'commands:'];
  for (const { spec } of COMMANDS) {
    const positionals = spec.positionals ? ` ${spec.positionals.usage}` : '';
    lines.push(`  ${spec.name}${positionals}`, `      ${spec.summary.split('\n')[0]}`);
    const flags = Object.entries(spec.options).map(([name, o]) => `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`);
    if (flags.length) lines.push(`      options: ${flags.join(' ')}`);
  }
  lines.push('', "Run 'trellis <command> --help' for a command's options. Configuration comes from the environment; see README.md.");
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const found = COMMANDS.find((c) => c.spec.name === command);
  if (found) return found.run(args);
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(usage() + '\n');
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`trellis: unknown command '${command}'\n${usage()}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`trellis: ${errorMessage(e)}\n`);
    process.exit(1);
  },
);
