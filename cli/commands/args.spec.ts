import { UsageError, commandHelp, parseCommandArgs, runCommand, type CommandSpec } from './args';
import { captureStdio } from '../testing/capture-stdio';

const SPEC: CommandSpec = {
  name: 'demo',
  summary: 'A command for the tests.',
  positionals: { usage: 'FILE', min: 0, max: 1 },
  options: {
    action: { type: 'string', multiple: true, value: 'ID', help: 'only this action' },
    'dry-run': { type: 'boolean', help: 'change nothing' },
  },
};

describe('parseCommandArgs (strict)', () => {
  it('reads repeated, inline and boolean options and positionals', () => {
    expect(parseCommandArgs(SPEC, ['--action', 'a', '--action=b', '--dry-run', 'f.json'])).toEqual({
      values: { action: ['a', 'b'], 'dry-run': true },
      positionals: ['f.json'],
    });
  });

  it.each([
    [['--acton', 'x'], "unknown option '--acton'"],
    [['-x'], "unknown option '-x'"],
    [['--action'], "Option '--action <value>' argument missing"],
    [['--dry-run=yes'], "Option '--dry-run' does not take an argument"],
    [['a', 'b'], "unexpected argument 'b'"],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseCommandArgs(SPEC, args)).toThrow(UsageError);
    expect(() => parseCommandArgs(SPEC, args)).toThrow(message);
  });

  it('asks for help before checking anything else', () => {
    expect(parseCommandArgs(SPEC, ['--acton', '--help'])).toBe('help');
    expect(parseCommandArgs(SPEC, ['-h'])).toBe('help');
  });

  it('lists every flag with its value and help in --help', () => {
    const help = commandHelp(SPEC);
    expect(help).toMatch(/^usage: trellis demo \[options\] FILE\n/);
    expect(help).toMatch(/--action ID +only this action \(repeatable\)/);
    expect(help).toMatch(/--dry-run +change nothing/);
    expect(help).toMatch(/--help, -h +print this help/);
  });
});

describe('runCommand', () => {
  const std = captureStdio();

  it('refuses an unknown flag with status 2 and a pointer to --help, without running the command', async () => {
    const run = jest.fn(async () => 0);
    expect(await runCommand(SPEC, ['--acton', 'x'], run)).toBe(2);
    expect(run).not.toHaveBeenCalled();
    expect(std.err).toBe("trellis demo: unknown option '--acton'\nusage: trellis demo [options] FILE\nRun 'trellis demo --help' for its options.\n");
  });

  it('refuses with status 2 what the command itself finds wrong with its arguments', async () => {
    expect(await runCommand(SPEC, [], async () => Promise.reject(new UsageError('--since goes with --decisions')))).toBe(2);
    expect(std.err).toMatch(/^trellis demo: --since goes with --decisions\n/);
  });

  it('prints the help on stdout with status 0', async () => {
    const run = jest.fn(async () => 0);
    expect(await runCommand(SPEC, ['--help'], run)).toBe(0);
    expect(run).not.toHaveBeenCalled();
    expect(std.out).toBe(commandHelp(SPEC));
  });
});
