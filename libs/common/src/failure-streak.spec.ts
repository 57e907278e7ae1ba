import { FailureStreak } from './failure-streak';
import type { Logger } from './logger';

function recorder() {
  const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push([level, message, fields]);
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines };
}

describe('FailureStreak: a loop that fails round after round logs the streak, not every round', () => {
  it('logs the first failure, a reminder at most every interval with the count and the time, and the recovery once', () => {
    const { logger, lines } = recorder();
    let t = 1_000_000;
    const streak = new FailureStreak(logger, 'outbox relay round failed', 'outbox relay rounds succeed again', { now: () => t, remindEveryMs: 30_000 });
    // five minutes of failures, one every 250 ms
    for (let i = 0; i < 1200; i++) {
      streak.failed('connect ECONNREFUSED', { relay: 'r1' });
      t += 250;
    }
    expect(streak.failures).toBe(1200);
    streak.succeeded();
    streak.succeeded();
    expect(lines[0]).toEqual(['warn', 'outbox relay round failed', { relay: 'r1', error: 'connect ECONNREFUSED' }]);
    expect(lines[1]).toEqual(['warn', 'outbox relay round failed', { relay: 'r1', error: 'connect ECONNREFUSED', failures: 121, failing_for_s: 30 }]);
    expect(lines.filter(([level]) => level === 'warn')).toHaveLength(10);
    expect(lines.at(-1)).toEqual(['info', 'outbox relay rounds succeed again', { failures: 1200, failing_for_s: 300 }]);
    expect(lines).toHaveLength(11);
    expect(streak.failures).toBe(0);
  });

  it('starts a new streak after a success, and logs at the level it was given', () => {
    const { logger, lines } = recorder();
    let t = 0;
    const streak = new FailureStreak(logger, 'build poll failed; will try again', 'build polls succeed again', { level: 'error', now: () => t });
    streak.succeeded();
    streak.failed('a');
    t += 10;
    streak.failed('b');
    streak.succeeded();
    t += 10;
    streak.failed('c');
    expect(lines).toEqual([
      ['error', 'build poll failed; will try again', { error: 'a' }],
      ['info', 'build polls succeed again', { failures: 2, failing_for_s: 0 }],
      ['error', 'build poll failed; will try again', { error: 'c' }],
    ]);
  });
});
