import { ConsumerQueues, Exchanges, deadLetterQueueOf, type QueueSpec } from '@trellis/contracts';
import { MessageBusError } from './bus-errors';

export type ExchangeType = 'direct' | 'topic';

/** Both adapters declare exactly these exchanges. */
export const ExchangeTypes: Readonly<Record<string, ExchangeType>> = {
  [Exchanges.actions]: 'direct',
  [Exchanges.work]: 'direct',
  [Exchanges.results]: 'direct',
  [Exchanges.events]: 'topic',
  [Exchanges.rpc]: 'direct',
  [Exchanges.deadLetter]: 'direct',
};

export type QueueArguments = Record<string, string | number>;

/**
 * The consumer queues of the shared topology plus any the caller adds (e.g. a subscriber queue
 * bound to the `trellis.events` topic exchange). Extra queues are checked so a typo fails at start
 * instead of silently routing nowhere.
 */
export function resolveQueues(extraQueues: readonly QueueSpec[] = []): QueueSpec[] {
  const byName = new Map(ConsumerQueues.map((q) => [q.name, q]));
  extraQueues.forEach((spec, i) => {
    const field = `extraQueues[${i}]`;
    if (!spec || typeof spec.name !== 'string' || !/^[A-Za-z0-9._:-]{1,200}$/.test(spec.name)) {
      throw new MessageBusError(`${field}.name must be a queue name of letters, digits and . _ : - (got ${JSON.stringify(spec?.name)})`);
    }
    if (spec.name.endsWith('.dlq')) {
      throw new MessageBusError(`${field}.name '${spec.name}' ends with '.dlq', which is reserved for dead-letter queues`);
    }
    if (!(spec.exchange in ExchangeTypes) || spec.exchange === Exchanges.deadLetter) {
      throw new MessageBusError(
        `${field}.exchange '${spec.exchange}' is not one of ${Object.keys(ExchangeTypes)
          .filter((e) => e !== Exchanges.deadLetter)
          .join(', ')}`,
      );
    }
    if (typeof spec.routingKey !== 'string') throw new MessageBusError(`${field}.routingKey must be a string`);
    if (spec.type !== 'quorum' && spec.type !== 'classic') {
      throw new MessageBusError(`${field}.type must be 'quorum' or 'classic' (got ${JSON.stringify(spec.type)})`);
    }
    const known = byName.get(spec.name);
    if (known && (known.exchange !== spec.exchange || known.routingKey !== spec.routingKey || known.type !== spec.type)) {
      throw new MessageBusError(`${field} redeclares queue '${spec.name}' with another binding or type`);
    }
    byName.set(spec.name, spec);
  });
  return [...byName.values()];
}

/** Arguments of a consumer queue; the same values on every start, or RabbitMQ refuses the redeclaration. */
export function consumerQueueArguments(spec: QueueSpec, deliveryLimit: number): QueueArguments {
  const deadLettering = {
    'x-dead-letter-exchange': Exchanges.deadLetter,
    'x-dead-letter-routing-key': spec.name,
  };
  // Classic queues ignore x-delivery-limit; declaring it there would only mislead readers.
  return spec.type === 'quorum'
    ? { 'x-queue-type': 'quorum', 'x-delivery-limit': deliveryLimit, ...deadLettering }
    : { 'x-queue-type': 'classic', ...deadLettering };
}

/**
 * Dead-letter queues have no delivery limit and no dead-letter exchange of their own: a replay
 * that fails leaves the message where it is, it is never dropped.
 */
export const deadLetterQueueArguments: QueueArguments = { 'x-queue-type': 'quorum' };

/**
 * `drainDeadLetters` takes the consumer queue; accepting the `.dlq` name too saves callers (the
 * replay command) from guessing which one the API wants.
 */
export function deadLetterQueueFor(queue: string): { deadLetterQueue: string; originalQueue: string } {
  return queue.endsWith('.dlq')
    ? { deadLetterQueue: queue, originalQueue: queue.slice(0, -'.dlq'.length) }
    : { deadLetterQueue: deadLetterQueueOf(queue), originalQueue: queue };
}

/** AMQP topic matching: `*` is exactly one word, `#` zero or more words. */
export function topicMatches(pattern: string, routingKey: string): boolean {
  const p = pattern.split('.');
  const k = routingKey.split('.');
  const match = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') {
      for (let skip = j; skip <= k.length; skip++) if (match(i + 1, skip)) return true;
      return false;
    }
    if (j === k.length) return false;
    return (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
  };
  return match(0, 0);
}
