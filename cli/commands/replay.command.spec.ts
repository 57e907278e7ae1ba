import { runReplay } from './replay.command';
import { captureStdio } from '../testing/capture-stdio';

/** Flag handling only: every case here is refused before replay opens a database or a bus. */
describe('trellis replay flags', () => {
  const std = captureStdio();

  it('refuses a misspelt flag instead of replaying everything', async () => {
    expect(await runReplay(['--acton', '6f1c1a4e-0000-4000-8000-000000000000'])).toBe(2);
    expect(std.err).toMatch(/^trellis replay: unknown option '--acton'\n/);
    expect(std.out).toBe('');
  });

  it.each([
    [['--since', '2026-11-01'], '--since goes with --decisions'],
    [['--decisions', '--action', 'x'], '--decisions does not go with --action'],
    [['--older-than', 'soon'], "--older-than must be a number of seconds, got 'soon'"],
    [['stray'], "unexpected argument 'stray'"],
  ])('refuses %j with status 2', async (args, message) => {
    expect(await runReplay(args)).toBe(2);
    expect(std.err).toContain(`trellis replay: ${message}`);
  });

  it('lists its flags in --help', async () => {
    expect(await runReplay(['--help'])).toBe(0);
    for (const flag of ['--action ID', '--older-than SECONDS', '--no-dead-letters', '--decisions', '--since TIME', '--help']) {
      expect(std.out).toContain(flag);
    }
  });
});
