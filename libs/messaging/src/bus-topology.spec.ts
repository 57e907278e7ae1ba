import { ConsumerQueues, Exchanges } from '@trellis/contracts';
import { consumerQueueArguments, deadLetterQueueFor, resolveQueues, topicMatches } from './bus-topology';

describe('topicMatches', () => {
  it.each([
    ['action.finished.*.*', 'action.finished.c1.a1', true],
    ['action.finished.*.*', 'action.finished.c1', false],
    ['action.finished.*', 'action.finished.c1.a1', false],
    ['action.finished.#', 'action.finished', true],
    ['action.finished.#', 'action.finished.c1.a1', true],
    ['action.finished.c1.#', 'action.finished.c2.a1', false],
    ['#', 'anything.at.all', true],
    ['#.a1', 'action.finished.c1.a1', true],
    ['*.finished.#.a1', 'action.finished.c1.x.a1', true],
    ['action.requested', 'action.requested', true],
    ['action.requested', 'action.requested.x', false],
  ])('%s vs %s → %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('resolveQueues', () => {
  const subscriber = { name: 'cli.finished', exchange: Exchanges.events, routingKey: 'action.finished.#', type: 'quorum' as const };

  it('adds extra queues to the shared topology', () => {
    expect(resolveQueues([subscriber]).map((q) => q.name)).toEqual([...ConsumerQueues.map((q) => q.name), 'cli.finished']);
  });

  it.each([
    [{ ...subscriber, exchange: 'trellis.nope' }, /extraQueues\[0\]\.exchange 'trellis.nope'/],
    [{ ...subscriber, exchange: Exchanges.deadLetter }, /extraQueues\[0\]\.exchange/],
    [{ ...subscriber, name: 'x.dlq' }, /reserved for dead-letter queues/],
    [{ ...subscriber, name: 'has space' }, /extraQueues\[0\]\.name/],
    [{ ...subscriber, type: 'stream' }, /extraQueues\[0\]\.type/],
    [{ ...ConsumerQueues[0], routingKey: 'other' }, /redeclares queue/],
  ])('refuses %o', (spec, error) => {
    expect(() => resolveQueues([spec as never])).toThrow(error);
  });
});

describe('queue arguments', () => {
  it('gives quorum queues the delivery limit and classic queues only dead-lettering', () => {
    const [quorum] = ConsumerQueues;
    expect(consumerQueueArguments(quorum, 5)).toEqual({
      'x-queue-type': 'quorum',
      'x-delivery-limit': 5,
      'x-dead-letter-exchange': 'trellis.dlx',
      'x-dead-letter-routing-key': quorum.name,
    });
    const rpc = ConsumerQueues.find((q) => q.type === 'classic')!;
    expect(consumerQueueArguments(rpc, 5)).toEqual({
      'x-queue-type': 'classic',
      'x-dead-letter-exchange': 'trellis.dlx',
      'x-dead-letter-routing-key': rpc.name,
    });
  });

  it('accepts the consumer queue or its dead-letter queue for draining', () => {
    expect(deadLetterQueueFor('q')).toEqual({ deadLetterQueue: 'q.dlq', originalQueue: 'q' });
    expect(deadLetterQueueFor('q.dlq')).toEqual({ deadLetterQueue: 'q.dlq', originalQueue: 'q' });
  });
});
