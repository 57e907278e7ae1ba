import { runEvaluate } from './evaluate.command';
import { runImportSenlin } from './import-senlin.command';
import { runMigrate } from './migrate.command';
import { runPolicyDefaults } from './policy-defaults.command';
import { runPurge } from './purge.command';
import { runReplay } from './replay.command';
import { runStart } from './start.command';
import { runToken } from './token.command';
import { runWatch } from './watch.command';
import { captureStdio } from '../testing/capture-stdio';

/** Every subcommand parses strictly: none starts, connects or prints a result on a flag it does not know. */
describe.each([
  ['start', runStart],
  ['replay', runReplay],
  ['purge', runPurge],
  ['migrate', runMigrate],
  ['evaluate', runEvaluate],
  ['token', runToken],
  ['policy-defaults', runPolicyDefaults],
  ['watch', runWatch],
  ['import-senlin', runImportSenlin],
])('trellis %s', (name, run) => {
  const std = captureStdio();

  it('refuses an unknown flag with status 2', async () => {
    expect(await run(['--bogus'])).toBe(2);
    expect(std.err).toMatch(new RegExp(`^trellis ${name}: unknown option '--bogus'\n`));
    expect(std.out).toBe('');
  });

  it('prints its usage for --help', async () => {
    expect(await run(['--help'])).toBe(0);
    expect(std.out).toMatch(new RegExp(`^usage: trellis ${name}`));
  });
});
