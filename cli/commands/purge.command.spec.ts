import { loadConfig } from '@trellis/common';
import { parseCommandArgs, type ParsedCommand } from './args';
import { PURGE_COMMAND, parseAge, purgePlan, runPurge } from './purge.command';
import { captureStdio } from '../testing/capture-stdio';

const parsed = (...args: string[]) => parseCommandArgs(PURGE_COMMAND, args) as ParsedCommand;

describe('trellis purge', () => {
  it.each([
    ['30d', 30 * 86_400],
    ['12h', 12 * 3_600],
    ['90m', 5_400],
    ['3600s', 3_600],
    ['0s', 0],
  ])('reads the age %s as %d seconds', (text, seconds) => {
    expect(parseAge('events-older-than', text)).toBe(seconds);
  });

  it.each(['30', '30 days', 'd', '-1d', '1.5d'])('refuses the age %j, naming the flag', (text) => {
    expect(() => parseAge('events-older-than', text)).toThrow(`--events-older-than must be a number and a unit (d, h, m or s), e.g. 30d; got '${text}'`);
  });

  it('purges only the kinds whose age is given', () => {
    expect(purgePlan(parsed('--events-older-than', '30d', '--actions-older-than', '12h'), loadConfig({}))).toEqual([
      { kind: 'events', olderThan: '30d', seconds: 30 * 86_400 },
      { kind: 'actions', olderThan: '12h', seconds: 12 * 3_600 },
    ]);
  });

  it('without an age, purges every kind at its configured retention, and none kept forever', () => {
    const config = loadConfig({ TRELLIS_RETAIN_DECISIONS_DAYS: '0', TRELLIS_RETAIN_EVENTS_DAYS: '14' });
    expect(purgePlan(parsed('--dry-run'), config)).toEqual([
      { kind: 'processed_messages', olderThan: '7d', seconds: 7 * 86_400 },
      { kind: 'events', olderThan: '14d', seconds: 14 * 86_400 },
      { kind: 'actions', olderThan: '30d', seconds: 30 * 86_400 },
      { kind: 'services', olderThan: '1d', seconds: 86_400 },
    ]);
  });

  it("takes the dead services' age in any unit", () => {
    expect(purgePlan(parsed('--services-older-than', '10m'), loadConfig({}))).toEqual([{ kind: 'services', olderThan: '10m', seconds: 600 }]);
  });

  describe('command line', () => {
    const std = captureStdio();

    it.each([
      [['--event-older-than', '30d'], "unknown option '--event-older-than'"],
      [['--events-older-than', '30'], '--events-older-than must be a number and a unit'],
      [['--dry-run', 'now'], "unexpected argument 'now'"],
    ])('refuses %j with status 2 before touching a database', async (args, message) => {
      expect(await runPurge(args)).toBe(2);
      expect(std.err).toContain(`trellis purge: ${message}`);
      expect(std.out).toBe('');
    });

    it('lists its flags in --help', async () => {
      expect(await runPurge(['--help'])).toBe(0);
      for (const flag of ['--events-older-than AGE', '--actions-older-than AGE', '--decisions-older-than AGE', '--processed-older-than AGE', '--services-older-than AGE', '--dry-run']) {
        expect(std.out).toContain(flag);
      }
    });
  });
});
