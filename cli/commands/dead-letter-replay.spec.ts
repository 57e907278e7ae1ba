import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import { Exchanges, Queues, RoutingKeys, deadLetterQueueOf } from '@trellis/contracts';
import { InMemoryMessageBus, type OutgoingMessage } from '@trellis/messaging';
import { countRepublished, replayDeadLetters } from './dead-letter-replay';

const dlq = deadLetterQueueOf(Queues.engineActions);

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const requested = (actionId: string, messageId = randomUUID()): OutgoingMessage => ({
  exchange: Exchanges.actions,
  routingKey: RoutingKeys.actionRequested,
  type: RoutingKeys.actionRequested,
  messageId,
  body: { message_id: messageId, action_id: actionId },
});

describe('replayDeadLetters', () => {
  let bus: InMemoryMessageBus;

  beforeEach(async () => {
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    // the engine refuses every message (poison), as fast as it can: each republished message is
    // back in the dead-letter queue before replay looks at the next one
    await bus.consume(Queues.engineActions, async () => ({ kind: 'dead-letter', reason: 'no such action' }), { prefetch: 8 });
    const publish = bus.publish.bind(bus);
    jest.spyOn(bus, 'publish').mockImplementation(async (m) => {
      const before = await bus.depth(dlq);
      await publish(m);
      await waitFor('the message dead-lettered again', async () => (await bus.depth(dlq)) > before);
    });
  });
  afterEach(() => bus.close());

  async function deadLetter(...messages: OutgoingMessage[]): Promise<void> {
    const start = await bus.depth(dlq);
    for (const m of messages) await bus.publish(m);
    await waitFor('the dead letters', async () => (await bus.depth(dlq)) === start + messages.length);
  }

  it('republishes each poison message once per run and counts it once, run after run', async () => {
    const messages = [requested(randomUUID()), requested(randomUUID()), requested(randomUUID())];
    await deadLetter(...messages);

    for (let run = 1; run <= 3; run++) {
      const report = await replayDeadLetters(bus, { actionIds: [] });
      expect(report.map((r) => r.message_id).sort()).toEqual(messages.map((m) => m.messageId).sort());
      expect(report.every((r) => r.outcome === 'republished' && r.dead_letter_reason === 'no such action')).toBe(true);
      const { [Queues.engineActions]: counted, ...otherQueues } = countRepublished(report);
      expect(counted).toBe(3);
      expect(Object.values(otherQueues).every((n) => n === 0)).toBe(true);
      expect(await bus.depth(dlq)).toBe(3);
    }
  });

  it('with --action, republishes only that action’s messages and reports the others as left in the dead-letter queue', async () => {
    const [wanted, other] = [randomUUID(), randomUUID()];
    const [mine, theirs] = [requested(wanted), requested(other)];
    await deadLetter(mine, theirs);

    const report = await replayDeadLetters(bus, { actionIds: [wanted] });

    expect(report).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ message_id: mine.messageId, action_id: wanted, outcome: 'republished' }),
        expect.objectContaining({
          message_id: theirs.messageId,
          action_id: other,
          outcome: 'skipped',
          why: 'not a message of an action given with --action; left in the dead-letter queue',
        }),
      ]),
    );
    expect(report).toHaveLength(2);
    expect(await bus.depth(dlq)).toBe(2);
  });

  it('skips a second copy of a message it already republished in the run, and leaves it dead-lettered', async () => {
    const message = requested(randomUUID());
    await deadLetter(message, { ...message });

    const report = await replayDeadLetters(bus, { actionIds: [] });

    expect(report.map((r) => r.outcome)).toEqual(['republished', 'skipped']);
    expect(report[1].why).toBe('a copy of a message already republished in this run; left in the dead-letter queue');
    expect(await bus.depth(dlq)).toBe(2);
  });
});
