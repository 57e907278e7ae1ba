import { parseArgs } from 'node:util';

/**
 * Every `trellis` subcommand declares its options here and parses them strictly (node:util
 * parseArgs, `strict: true`): an unknown or misspelt flag is refused with status 2 instead of being
 * ignored — `trellis replay --acton X` used to replay everything.
 */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** may be given more than once; the values collect into a list */
  multiple?: boolean;
  /** the value's placeholder in --help (`ID`, `AGE`) */
  value?: string;
  help: string;
}

export interface CommandSpec {
  name: string;
  /** one line for `trellis --help` */
  summary: string;
  /** positional arguments as shown in the usage line (`FILE|-`), none when absent */
  positionals?: { usage: string; min: number; max: number };
  options: Record<string, OptionSpec>;
  /** lines printed after the options in --help */
  notes?: string[];
}

export interface ParsedCommand {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** A command line the command cannot run: printed with the usage line, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const HELP: OptionSpec = { type: 'boolean', help: 'print this help' };

/** The command's options as parsed; `help` when --help/-h was asked for (nothing else is checked then). */
export function parseCommandArgs(spec: CommandSpec, args: string[]): ParsedCommand | 'help' {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: spec.positionals !== undefined,
      options: Object.fromEntries(
        Object.entries({ ...spec.options, help: HELP }).map(([name, o]) => [name, { type: o.type, multiple: o.multiple ?? false }]),
      ),
    });
  } catch (e) {
    throw new UsageError(describeParseError(e as Error & { code?: string }));
  }
  const { values, positionals } = parsed as ParsedCommand;
  const expected = spec.positionals ?? { usage: '', min: 0, max: 0 };
  if (positionals.length < expected.min) throw new UsageError(`missing ${expected.usage}`);
  if (positionals.length > expected.max) throw new UsageError(`unexpected argument '${positionals[expected.max]}'`);
  return { values, positionals };
}

/** node's messages, shorter and without its advice about `--` (no trellis command takes dashed positionals) */
function describeParseError(e: Error & { code?: string }): string {
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option '${quoted ?? e.message}'`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument '${quoted ?? e.message}'`;
    default:
      return e.message;
  }
}

export function usageLine(spec: CommandSpec): string {
  const options = Object.keys(spec.options).length ? ' [options]' : '';
  const positionals = spec.positionals ? ` ${spec.positionals.usage}` : '';
  return `usage: trellis ${spec.name}${options}${positionals}`;
}

/** `trellis <command> --help`: the usage line, the summary and every option. */
export function commandHelp(spec: CommandSpec): string {
  const rows = Object.entries({ ...spec.options, help: HELP }).map(([name, o]) => {
    const flag = `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}${name === 'help' ? ', -h' : ''}`;
    return `  ${flag.padEnd(32)} ${o.help}${o.multiple ? ' (repeatable)' : ''}`;
  });
  return [usageLine(spec), '', spec.summary, '', 'options:', ...rows, ...(spec.notes ? ['', ...spec.notes] : [])].join('\n') + '\n';
}

/**
 * Runs a subcommand: --help prints its help (status 0); a command line it cannot run is refused
 * on stderr with its usage (status 2); otherwise `run` gets the parsed options.
 */
export async function runCommand(spec: CommandSpec, args: string[], run: (parsed: ParsedCommand) => Promise<number>): Promise<number> {
  try {
    const parsed = parseCommandArgs(spec, args);
    if (parsed === 'help') {
      process.stdout.write(commandHelp(spec));
      return 0;
    }
    return await run(parsed);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`trellis ${spec.name}: ${e.message}\n${usageLine(spec)}\nRun 'trellis ${spec.name} --help' for its options.\n`);
    return 2;
  }
}

export const stringOption = (p: ParsedCommand, name: string): string | undefined => p.values[name] as string | undefined;
export const listOption = (p: ParsedCommand, name: string): string[] => (p.values[name] as string[] | undefined) ?? [];
export const booleanOption = (p: ParsedCommand, name: string): boolean => p.values[name] === true;

/**
 * A command that needs the services' PostgreSQL (or RabbitMQ) and was not told where it is: says which
 * setting to give and what to do instead with the embedded default, on stderr; the exit status (2).
 */
export function missingSetting(command: string, what: string, instead: string): number {
  process.stderr.write(`trellis ${command}: set ${what}.\n${instead}\n`);
  return 2;
}
