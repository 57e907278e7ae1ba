import { currentLogContext } from '@trellis/common';
import { messageRetries, messagesConsumed, messagesDeadLettered } from '@trellis/observability/metrics';
import { metricValue } from '@trellis/observability/testing';
import type { IncomingMessage } from './bus.port';
import { deadLetterOrigin, handleDelivery, settle, toOutcome } from './message-codec';

describe('settle', () => {
  it.each([
    [{ kind: 'ack' }, 0, 'quorum', { kind: 'ack' }],
    [{ kind: 'retry', reason: 'r' }, 0, 'quorum', { kind: 'requeue', reason: 'r', reasonClass: 'unclassified' }],
    [{ kind: 'retry', reason: 'r', reasonClass: 'transient' }, 1, 'quorum', { kind: 'requeue', reason: 'r', reasonClass: 'transient' }],
    [{ kind: 'retry', reason: 'r', reasonClass: 'transient' }, 2, 'quorum', { kind: 'dead-letter', reason: 'delivery limit reached: r', reasonClass: 'delivery_limit' }],
    [{ kind: 'retry', reason: 'r' }, 0, 'classic', { kind: 'requeue', reason: 'r', reasonClass: 'unclassified' }],
    [{ kind: 'dead-letter', reason: 'bad', reasonClass: 'invalid' }, 0, 'quorum', { kind: 'dead-letter', reason: 'bad', reasonClass: 'invalid' }],
  ] as const)('%o after %i earlier deliveries on a %s queue (limit 3) → %o', (outcome, count, type, expected) => {
    expect(settle(outcome, count, type, 3)).toEqual(expected);
  });
});

describe('toOutcome', () => {
  it('keeps valid outcomes and turns anything else into a retry that says why', () => {
    expect(toOutcome({ kind: 'ack' })).toEqual({ kind: 'ack' });
    expect(toOutcome({ kind: 'dead-letter', reason: 'x' })).toEqual({ kind: 'dead-letter', reason: 'x' });
    expect(toOutcome({ kind: 'dead-letter', reason: 'x', reasonClass: 'rejected' })).toEqual({ kind: 'dead-letter', reason: 'x', reasonClass: 'rejected' });
    // a class outside the bounded set is dropped, never turned into a label
    expect(toOutcome({ kind: 'retry', reason: 'x', reasonClass: 'database down at 10.0.0.5' })).toEqual({ kind: 'retry', reason: 'x' });
    expect(toOutcome({ kind: 'retry' })).toEqual({
      kind: 'retry',
      reason: 'handler returned an invalid outcome: {"kind":"retry"}',
      reasonClass: 'unexpected',
    });
    expect(toOutcome(undefined).kind).toBe('retry');
  });
});

describe('handleDelivery', () => {
  const message = (queue: string, deliveryCount = 0): IncomingMessage => ({
    queue,
    body: { action_id: '7f6c3a52-4a57-4f83-9f3e-2a1f4c9b8d10' },
    raw: Buffer.from('{}'),
    correlationId: 'req-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11',
    headers: {},
    redelivered: deliveryCount > 0,
    deliveryCount,
  });

  it("runs the handler in the message's log context", async () => {
    let seen: unknown;
    await handleDelivery(async () => ((seen = currentLogContext()), { kind: 'ack' }), message('q.context'), 'quorum', 3);
    expect(seen).toEqual({ correlation_id: 'req-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11', action_id: '7f6c3a52-4a57-4f83-9f3e-2a1f4c9b8d10' });
  });

  it('counts what became of each message by queue, and retries and dead letters by reason class', async () => {
    const q = 'q.counted';
    await handleDelivery(async () => ({ kind: 'ack' }), message(q), 'quorum', 3);
    await handleDelivery(async () => {
      throw new Error('boom');
    }, message(q), 'quorum', 3);
    await handleDelivery(async () => ({ kind: 'retry', reason: 'nova down', reasonClass: 'transient' }), message(q, 2), 'quorum', 3);
    await handleDelivery(async () => ({ kind: 'dead-letter', reason: 'not JSON', reasonClass: 'invalid' }), message(q), 'quorum', 3);
    expect(await metricValue(messagesConsumed, { queue: q, outcome: 'ack' })).toBe(1);
    expect(await metricValue(messagesConsumed, { queue: q, outcome: 'retry' })).toBe(1);
    expect(await metricValue(messagesConsumed, { queue: q, outcome: 'dead_letter' })).toBe(2);
    expect(await metricValue(messageRetries, { queue: q, reason: 'unexpected' })).toBe(1);
    expect(await metricValue(messagesDeadLettered, { queue: q, reason: 'delivery_limit' })).toBe(1);
    expect(await metricValue(messagesDeadLettered, { queue: q, reason: 'invalid' })).toBe(1);
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
