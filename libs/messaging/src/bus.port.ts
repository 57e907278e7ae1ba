import type { ReasonClass } from '@trellis/observability/metrics';

export type { ReasonClass } from '@trellis/observability/metrics';

/**
 * The message bus port. Two adapters implement it with the same semantics:
 * - AmqpMessageBus (amqplib, RabbitMQ): durable exchanges, quorum queues, persistent messages,
 *   publisher confirms, manual acks, bounded prefetch, per-queue dead-letter queues;
 * - InMemoryMessageBus (the embedded default): the same queues, acks, redelivery, delivery limit
 *   and dead-lettering, inside one process.
 * Services never touch amqplib directly; the same contract tests run against both adapters.
 */

export interface OutgoingMessage {
  exchange: string;
  routingKey: string;
  /** JSON-serialisable body */
  body: unknown;
  messageId: string;
  correlationId?: string;
  /** AMQP `type` property: the message pattern (e.g. `action.requested`, `cluster.scale_out`) */
  type?: string;
  headers?: Record<string, string | number | boolean>;
}

export interface IncomingMessage {
  queue: string;
  /** the exchange and routing key it was published with (a transport may route on the key) */
  exchange?: string;
  routingKey?: string;
  /** parsed JSON body, or undefined when the payload was not JSON (`parseError` says why) */
  body: unknown;
  parseError?: string;
  raw: Buffer;
  messageId?: string;
  correlationId?: string;
  type?: string;
  headers: Record<string, unknown>;
  /** true when the broker delivered this message before (consumer died or nacked) */
  redelivered: boolean;
  /** how many times it was delivered before (quorum queues' x-delivery-count), 0 on first delivery */
  deliveryCount: number;
}

/**
 * What a consumer decided about one message. The bus acks only on `ack`; `retry` gives the
 * message back to the queue (until the delivery limit, then it is dead-lettered with the reason);
 * `dead-letter` moves it to `<queue>.dlq` at once with the reason in a header. `reasonClass` is the
 * reason's bounded class for the metrics (`unclassified` when a handler gives none).
 */
export type HandlerOutcome =
  | { kind: 'ack' }
  | { kind: 'retry'; reason: string; reasonClass?: ReasonClass }
  | { kind: 'dead-letter'; reason: string; reasonClass?: ReasonClass };

export type MessageHandler = (message: IncomingMessage) => Promise<HandlerOutcome>;

export interface ConsumeOptions {
  /** how many unacked messages this consumer may hold */
  prefetch: number;
}

export interface ConsumerHandle {
  /** stop receiving; handlers already running finish and their outcomes are applied first */
  cancel(): Promise<void>;
}

export interface RpcRequestOptions {
  /** the exchange + routing key the request queue is bound to */
  exchange: string;
  routingKey: string;
  pattern: string;
  timeoutMs: number;
  headers?: Record<string, string | number | boolean>;
  correlationId?: string;
  /**
   * the request's message id (a fresh UUID when absent); resending a request with the id it was
   * first sent with lets the gateway answer it once (docs/RPC.md)
   */
  messageId?: string;
}

/** A handler that answers one RPC request; its return value is the JSON reply. */
export type RpcHandler = (message: IncomingMessage) => Promise<unknown>;

export interface DeadLetter {
  queue: string;
  /** the consumer queue it came from */
  originalQueue: string;
  reason: string;
  message: IncomingMessage;
}

/** Takes one dead letter; resolving (without `keep`) removes it from the dead-letter queue. */
export type DeadLetterSink = (dead: DeadLetter) => Promise<void | 'keep'>;

export interface MessageBus {
  /** connect and declare every exchange and queue of the topology (idempotent) */
  start(): Promise<void>;
  /** resolves once the broker confirmed the message as stored (persistent); rejects on a nack */
  publish(message: OutgoingMessage): Promise<void>;
  consume(queue: string, handler: MessageHandler, options: ConsumeOptions): Promise<ConsumerHandle>;
  /** request/reply over a request queue; rejects on timeout */
  request(body: unknown, options: RpcRequestOptions): Promise<unknown>;
  /** answer requests arriving on `queue` (replies go to the caller's reply-to) */
  serve(queue: string, handler: RpcHandler, options: ConsumeOptions): Promise<ConsumerHandle>;
  /**
   * Hand the messages of `<queue>.dlq` to `sink`, one at a time, and return how many were removed.
   * A message is removed only after `sink` resolved (replay re-publishes it there); one the sink
   * answers `keep` for stays in the dead-letter queue. The drain looks at no more than the messages
   * that were in the dead-letter queue when it began (and at most `max`): a message dead-lettered
   * again meanwhile — a replayed poison message its consumer refuses again — waits for the next drain.
   */
  drainDeadLetters(queue: string, max: number, sink: DeadLetterSink): Promise<number>;
  /** number of messages ready in a queue (for tests, replay summaries and benchmarks) */
  depth(queue: string): Promise<number>;
  close(): Promise<void>;
}
