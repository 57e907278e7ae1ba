import { withLogContext, type LogContext } from '@trellis/common/log-context';
import { Headers, SCHEMA_VERSION } from '@trellis/contracts';
import { REASON_CLASSES, messageRetries, messagesConsumed, messagesDeadLettered, type ReasonClass } from '@trellis/observability/metrics';
import { DEFAULT_MAX_MESSAGE_BYTES, DeadLetterDrainError, MessageBusError, MessageTooLargeError, RpcTimeoutError, errorMessage, sizeText } from './bus-errors';
import type { ConsumeOptions, DeadLetterSink, HandlerOutcome, IncomingMessage, MessageHandler, OutgoingMessage, RpcRequestOptions } from './bus.port';

export const JSON_CONTENT_TYPE = 'application/json';

/** Replies carry the request's message id: correlation ids follow a user request and are not unique per call. */
export const IN_REPLY_TO_HEADER = 'x-trellis-in-reply-to';

/** Long reasons (stack-like validation dumps) are cut so the header table stays small. */
const MAX_REASON_LENGTH = 2000;

export type HeaderValue = string | number | boolean;

export function encodeBody(body: unknown, field = 'body'): Buffer {
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch (e) {
    throw new MessageBusError(`${field} is not JSON-serialisable: ${errorMessage(e)}`);
  }
  if (text === undefined) throw new MessageBusError(`${field} is not JSON-serialisable (got ${typeof body})`);
  return Buffer.from(text, 'utf8');
}

export function decodeBody(raw: Buffer): { body: unknown; parseError?: string } {
  try {
    return { body: JSON.parse(raw.toString('utf8')) };
  } catch (e) {
    return { body: undefined, parseError: `payload is not JSON: ${errorMessage(e)}` };
  }
}

const nonEmpty = (value: unknown) => typeof value === 'string' && value.length > 0;

function checkHeaders(headers: unknown, field: string): void {
  if (headers === undefined) return;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new MessageBusError(`${field} must be an object of string, number or boolean values`);
  }
  for (const [key, value] of Object.entries(headers)) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new MessageBusError(`${field}.${key} must be a string, number or boolean (got ${typeof value})`);
    }
  }
}

/** Rejects a malformed message before it reaches a broker, naming the field. */
export function checkOutgoing(message: OutgoingMessage): void {
  if (!message || typeof message !== 'object') throw new MessageBusError('message must be an object');
  if (!nonEmpty(message.exchange)) throw new MessageBusError('message.exchange must be a non-empty string');
  if (typeof message.routingKey !== 'string') throw new MessageBusError('message.routingKey must be a string');
  if (!nonEmpty(message.messageId)) throw new MessageBusError('message.messageId must be a non-empty string');
  if (message.correlationId !== undefined && !nonEmpty(message.correlationId)) {
    throw new MessageBusError('message.correlationId must be a non-empty string when given');
  }
  if (message.type !== undefined && !nonEmpty(message.type)) {
    throw new MessageBusError('message.type must be a non-empty string when given');
  }
  checkHeaders(message.headers, 'message.headers');
}

export function checkRpcOptions(options: RpcRequestOptions): void {
  if (!options || typeof options !== 'object') throw new MessageBusError('RPC options must be an object');
  if (!nonEmpty(options.exchange)) throw new MessageBusError('options.exchange must be a non-empty string');
  if (typeof options.routingKey !== 'string') throw new MessageBusError('options.routingKey must be a string');
  if (!nonEmpty(options.pattern)) throw new MessageBusError('options.pattern must be a non-empty string');
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new MessageBusError(`options.timeoutMs must be a positive number of milliseconds (got ${options.timeoutMs})`);
  }
  if (options.correlationId !== undefined && !nonEmpty(options.correlationId)) {
    throw new MessageBusError('options.correlationId must be a non-empty string when given');
  }
  checkHeaders(options.headers, 'options.headers');
}

export function checkConsumeOptions(options: ConsumeOptions): void {
  const prefetch = options?.prefetch;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 65535) {
    throw new MessageBusError(`options.prefetch must be an integer from 1 to 65535 (got ${prefetch})`);
  }
}

export function checkMax(max: number): void {
  if (!Number.isInteger(max) || max < 0) throw new MessageBusError(`max must be a non-negative integer (got ${max})`);
}

/** Every message carries the schema version; a caller's explicit value wins. */
export function outgoingHeaders(headers: Record<string, HeaderValue> | undefined): Record<string, HeaderValue> {
  return { [Headers.schemaVersion]: SCHEMA_VERSION, ...(headers ?? {}) };
}

export const truncateReason = (reason: string) =>
  reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;

/** Headers of the copy Trellis puts into `<queue>.dlq`. */
export function deadLetterHeaders(headers: Record<string, unknown>, queue: string, reason: string): Record<string, unknown> {
  const copy = { ...headers };
  // The copy starts a new life in the DLQ; a stale delivery count would confuse a later replay.
  delete copy[Headers.deliveryCount];
  return { ...copy, [Headers.deadLetterReason]: truncateReason(reason), [Headers.originalQueue]: queue };
}

const BROKER_REASONS: Record<string, string> = {
  delivery_limit: 'delivery limit reached (dead-lettered by the broker)',
  rejected: 'rejected without requeue (dead-lettered by the broker)',
  expired: 'message expired (dead-lettered by the broker)',
  maxlen: 'queue length limit reached (dead-lettered by the broker)',
};

/**
 * Why a message is in a dead-letter queue and where it came from: Trellis's own headers when it
 * dead-lettered the message, otherwise what RabbitMQ recorded (`x-first-death-*`, e.g. the quorum
 * queue's delivery limit after consumers kept dying).
 */
export function deadLetterOrigin(
  headers: Record<string, unknown>,
  fallbackQueue: string,
): { reason: string; originalQueue: string } {
  const reason = headers[Headers.deadLetterReason];
  const original = headers[Headers.originalQueue];
  if (typeof reason === 'string') {
    return { reason, originalQueue: typeof original === 'string' ? original : fallbackQueue };
  }
  const brokerReason = headers['x-first-death-reason'];
  const brokerQueue = headers['x-first-death-queue'];
  return {
    reason:
      typeof brokerReason === 'string'
        ? (BROKER_REASONS[brokerReason] ?? `dead-lettered by the broker: ${brokerReason}`)
        : 'unknown (no dead-letter reason header)',
    originalQueue: typeof original === 'string' ? original : typeof brokerQueue === 'string' ? brokerQueue : fallbackQueue,
  };
}

/**
 * One dead letter of a drain, as both buses hand it to the sink: with the queue it came from and
 * why. A sink that throws ends the drain: the message goes back (`giveBack`) and the error says how
 * many were drained before it.
 */
export async function offerDeadLetter(
  sink: DeadLetterSink,
  deadLetterQueue: string,
  fallbackQueue: string,
  message: IncomingMessage,
  drained: number,
  giveBack: () => void,
): Promise<void | 'keep'> {
  const origin = deadLetterOrigin(message.headers, fallbackQueue);
  try {
    return await sink({ queue: deadLetterQueue, originalQueue: origin.originalQueue, reason: origin.reason, message });
  } catch (error) {
    giveBack();
    throw new DeadLetterDrainError(deadLetterQueue, drained, error);
  }
}

/**
 * What happens to a delivered message once its handler decided. `retry` becomes a dead-letter on
 * the last allowed delivery so the reason survives (the broker's own delivery-limit dead-lettering,
 * kept as a backstop for consumers that crash, records only `delivery_limit`).
 */
export type Settlement =
  | { kind: 'ack' }
  | { kind: 'requeue'; reason: string; reasonClass: ReasonClass }
  | { kind: 'dead-letter'; reason: string; reasonClass: ReasonClass };

export function settle(
  outcome: HandlerOutcome,
  deliveryCount: number,
  queueType: 'quorum' | 'classic',
  deliveryLimit: number,
): Settlement {
  switch (outcome.kind) {
    case 'ack':
      return outcome;
    case 'dead-letter':
      return { kind: 'dead-letter', reason: outcome.reason, reasonClass: outcome.reasonClass ?? 'unclassified' };
    case 'retry':
      // Classic queues do not count deliveries (no x-delivery-count), exactly like RabbitMQ.
      if (queueType === 'quorum' && deliveryCount + 1 >= deliveryLimit) {
        return { kind: 'dead-letter', reason: `delivery limit reached: ${outcome.reason}`, reasonClass: 'delivery_limit' };
      }
      return { kind: 'requeue', reason: outcome.reason, reasonClass: outcome.reasonClass ?? 'unclassified' };
  }
}

const isReasonClass = (value: unknown): value is ReasonClass => (REASON_CLASSES as readonly unknown[]).includes(value);

/** A handler's return value, checked: a typo'd outcome must not silently ack or loop. */
export function toOutcome(value: unknown): HandlerOutcome {
  if (value && typeof value === 'object') {
    const { kind, reason, reasonClass } = value as { kind?: unknown; reason?: unknown; reasonClass?: unknown };
    if (kind === 'ack') return { kind: 'ack' };
    if ((kind === 'retry' || kind === 'dead-letter') && typeof reason === 'string') {
      return isReasonClass(reasonClass) ? { kind, reason, reasonClass } : { kind, reason };
    }
  }
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  return { kind: 'retry', reason: `handler returned an invalid outcome: ${shown.slice(0, 200)}`, reasonClass: 'unexpected' };
}

/**
 * The log context of a delivered message: its correlation id (the request that started its action)
 * and its action, so every line its handler writes, and every Nova call it makes, carries them.
 */
export function logContextOf(message: IncomingMessage): LogContext {
  const actionId = (message.body as { action_id?: unknown } | undefined)?.action_id;
  const context: LogContext = {};
  if (message.correlationId) context.correlation_id = message.correlationId;
  if (typeof actionId === 'string') context.action_id = actionId;
  return context;
}

/**
 * One delivery to a consumer, as both buses run it: the handler in the message's log context, its
 * outcome (a throw is a retry) settled against the delivery limit and counted.
 */
export async function handleDelivery(
  handler: MessageHandler,
  message: IncomingMessage,
  queueType: 'quorum' | 'classic',
  deliveryLimit: number,
): Promise<Settlement> {
  let outcome: HandlerOutcome;
  try {
    outcome = toOutcome(await withLogContext(logContextOf(message), () => handler(message)));
  } catch (error) {
    outcome = { kind: 'retry', reason: errorMessage(error), reasonClass: 'unexpected' };
  }
  const settlement = settle(outcome, message.deliveryCount, queueType, deliveryLimit);
  countSettlement(message.queue, settlement);
  return settlement;
}

/** What became of a consumed message, in the metrics. */
export function countSettlement(queue: string, settlement: Settlement): void {
  if (settlement.kind === 'ack') {
    messagesConsumed.inc({ queue, outcome: 'ack' });
  } else if (settlement.kind === 'requeue') {
    messagesConsumed.inc({ queue, outcome: 'retry' });
    messageRetries.inc({ queue, reason: settlement.reasonClass });
  } else {
    messagesConsumed.inc({ queue, outcome: 'dead_letter' });
    messagesDeadLettered.inc({ queue, reason: settlement.reasonClass });
  }
}

export const deliveryCountOf = (headers: Record<string, unknown>): number => {
  const raw = headers[Headers.deliveryCount];
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : 0;
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** Structured log fields, so a message can be followed by id or correlation id across services. */
export const messageFields = (m: { messageId?: string; correlationId?: string; type?: string; queue: string }) => ({
  queue: m.queue,
  message_id: m.messageId,
  correlation_id: m.correlationId,
  type: m.type,
});

export function describeMessage(m: { messageId?: string; type?: string; queue: string }): string {
  return `message ${m.messageId ?? '(no id)'}${m.type ? ` (${m.type})` : ''} on '${m.queue}'`;
}

/**
 * Runs an RPC handler and encodes its reply. A handler that throws (or returns something that is
 * not JSON) still answers, so the caller gets an error instead of waiting for its timeout.
 */
export async function rpcReplyFor(
  handler: (message: IncomingMessage) => Promise<unknown>,
  message: IncomingMessage,
  onError: (error: unknown) => void,
  maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
): Promise<Buffer> {
  try {
    const reply = await withLogContext(logContextOf(message), () => handler(message));
    const encoded = encodeBody(reply === undefined ? null : reply, 'RPC reply');
    if (encoded.length <= maxBytes) return encoded;
    // the broker would refuse it (and close the channel): the caller learns why instead of timing out
    const tooLarge = new MessageTooLargeError(encoded.length, maxBytes, undefined, 'bus');
    onError(tooLarge);
    return encodeBody({
      error: {
        code: 413,
        type: 'RequestLimitExceeded',
        message: `The reply is ${sizeText(encoded.length)}, larger than the ${sizeText(maxBytes)} the message broker takes; ask for less (limit and marker).`,
      },
    });
  } catch (error) {
    onError(error);
    return encodeBody({ error: { code: 500, message: errorMessage(error) } });
  }
}

/**
 * One RPC request, as both buses answer it: the reply (the handler runs in the request's log
 * context) goes to its reply-to address and the request is acked; one without a reply-to address
 * can never be answered and is dead-lettered. Counted either way.
 */
export async function answerDelivery(
  handler: (message: IncomingMessage) => Promise<unknown>,
  message: IncomingMessage,
  replyTo: string | undefined,
  sendReply: (reply: Buffer) => void,
  onError: (error: unknown) => void,
  maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
): Promise<Settlement> {
  let settlement: Settlement;
  if (replyTo) {
    sendReply(await rpcReplyFor(handler, message, onError, maxBytes));
    settlement = { kind: 'ack' };
  } else {
    settlement = { kind: 'dead-letter', reason: 'RPC request without a reply-to address', reasonClass: 'invalid' };
  }
  countSettlement(message.queue, settlement);
  return settlement;
}

/** An RPC request waiting for its reply. */
export interface PendingReply {
  resolve(reply: unknown): void;
  reject(error: Error): void;
}

/**
 * The waiting side of an RPC request, as both buses keep it: settled once, by the reply, by a
 * failure or by RpcTimeoutError after `timeoutMs`; settling it stops the timer and `forget`s it
 * (takes it out of the bus's table of pending requests).
 */
export function awaitReply(
  options: Pick<RpcRequestOptions, 'pattern' | 'timeoutMs'>,
  forget: () => void,
  resolve: (reply: unknown) => void,
  reject: (error: Error) => void,
): PendingReply {
  const timer = setTimeout(() => {
    forget();
    reject(new RpcTimeoutError(options.pattern, options.timeoutMs));
  }, options.timeoutMs);
  const finish = () => {
    clearTimeout(timer);
    forget();
  };
  return {
    resolve: (reply) => (finish(), resolve(reply)),
    reject: (error) => (finish(), reject(error)),
  };
}
