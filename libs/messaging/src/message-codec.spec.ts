import { deadLetterOrigin, settle, toOutcome } from './message-codec';

describe('settle', () => {
  it.each([
    [{ kind: 'ack' }, 0, 'quorum', { kind: 'ack' }],
    [{ kind: 'retry', reason: 'r' }, 0, 'quorum', { kind: 'requeue', reason: 'r' }],
    [{ kind: 'retry', reason: 'r' }, 1, 'quorum', { kind: 'requeue', reason: 'r' }],
    [{ kind: 'retry', reason: 'r' }, 2, 'quorum', { kind: 'dead-letter', reason: 'delivery limit reached: r' }],
    [{ kind: 'retry', reason: 'r' }, 0, 'classic', { kind: 'requeue', reason: 'r' }],
    [{ kind: 'dead-letter', reason: 'bad' }, 0, 'quorum', { kind: 'dead-letter', reason: 'bad' }],
  ] as const)('%o after %i earlier deliveries on a %s queue (limit 3) → %o', (outcome, count, type, expected) => {
    expect(settle(outcome, count, type, 3)).toEqual(expected);
  });
});

describe('toOutcome', () => {
  it('keeps valid outcomes and turns anything else into a retry that says why', () => {
    expect(toOutcome({ kind: 'ack' })).toEqual({ kind: 'ack' });
    expect(toOutcome({ kind: 'dead-letter', reason: 'x' })).toEqual({ kind: 'dead-letter', reason: 'x' });
    expect(toOutcome({ kind: 'retry' })).toEqual({ kind: 'retry', reason: 'handler returned an invalid outcome: {"kind":"retry"}' });
    expect(toOutcome(undefined).kind).toBe('retry');
  });
});

describe('deadLetterOrigin', () => {
  it("prefers Trellis's headers", () => {
    expect(
      deadLetterOrigin({ 'x-trellis-dead-letter-reason': 'bad', 'x-trellis-original-queue': 'q', 'x-first-death-queue': 'other' }, 'fallback'),
    ).toEqual({ reason: 'bad', originalQueue: 'q' });
  });

  it("falls back to what RabbitMQ recorded", () => {
    expect(deadLetterOrigin({ 'x-first-death-reason': 'delivery_limit', 'x-first-death-queue': 'q' }, 'fallback')).toEqual({
      reason: 'delivery limit reached (dead-lettered by the broker)',
      originalQueue: 'q',
    });
    expect(deadLetterOrigin({}, 'fallback')).toEqual({ reason: 'unknown (no dead-letter reason header)', originalQueue: 'fallback' });
  });
});
