/** Every error the bus adapters raise on purpose; anything else is a bug or a library error. */
export class MessageBusError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MessageBusError';
  }
}

/** The exchange had no queue bound for the routing key: the message was not stored anywhere. */
export class UnroutableMessageError extends MessageBusError {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
    readonly messageId: string | undefined,
  ) {
    super(`message ${messageId ?? '(no id)'} is unroutable: no queue is bound to exchange '${exchange}' with routing key '${routingKey}'`);
    this.name = 'UnroutableMessageError';
  }
}

export class RpcTimeoutError extends MessageBusError {
  constructor(
    readonly pattern: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply to RPC request '${pattern}' within ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** The broker cannot be reached (at start, or while the adapter is reconnecting). */
export class BrokerUnavailableError extends MessageBusError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BrokerUnavailableError';
  }
}

/** RabbitMQ refused to redeclare a queue or exchange because it exists with other arguments. */
export class TopologyMismatchError extends MessageBusError {
  constructor(
    readonly kind: 'queue' | 'exchange',
    readonly entity: string,
    readonly argument: string | undefined,
    brokerMessage: string,
  ) {
    super(
      `RabbitMQ refused to redeclare ${kind} '${entity}'` +
        (argument ? `: its argument '${argument}' differs from what Trellis declares` : '') +
        ` (${brokerMessage}). The ${kind} was created earlier with other settings (an older Trellis version or ` +
        `another TRELLIS_DELIVERY_LIMIT). Delete it so Trellis can declare it again, e.g. ` +
        `\`rabbitmqctl delete_${kind === 'queue' ? 'queue' : 'exchange'} ${entity}\` ` +
        `(messages in a deleted queue are lost: drain or move them first).`,
    );
    this.name = 'TopologyMismatchError';
  }
}

/**
 * What RabbitMQ 4 takes by default (`max_message_size`, 16 MiB); TRELLIS_MAX_MESSAGE_BYTES sets the
 * limit the buses keep to, which must not be above the broker's.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The message is larger than the broker takes: refused before it was sent (its encoded body is above
 * the bus's `maxMessageBytes`), or by RabbitMQ itself (406 "message size … is larger than configured
 * max size …", whose limit may be lower than the bus was told). Sending it again cannot succeed, so
 * callers treat it as permanent: the outbox relay sets its row aside (docs/RELIABILITY.md §3).
 */
export class MessageTooLargeError extends MessageBusError {
  readonly permanent = true;
  constructor(
    readonly bytes: number,
    readonly limit: number,
    readonly messageId: string | undefined,
    /** whose limit refused it: the bus's (TRELLIS_MAX_MESSAGE_BYTES) or the broker's (max_message_size) */
    readonly refusedBy: 'bus' | 'broker',
    options?: { cause?: unknown },
  ) {
    super(
      `message ${messageId ?? '(no id)'} is ${sizeText(bytes)}, larger than the ${sizeText(limit)} the message broker takes ` +
        (refusedBy === 'bus' ? '(TRELLIS_MAX_MESSAGE_BYTES)' : "(RabbitMQ's max_message_size)"),
      options,
    );
    this.name = 'MessageTooLargeError';
  }
}

/** A publish that can never succeed, however often it is tried (see MessageTooLargeError). */
export function isPermanentPublishError(error: unknown): error is MessageTooLargeError {
  return error instanceof MessageTooLargeError;
}

/** "49,153,024 bytes (46.9 MiB)": the exact count, and a size a person reads at a glance. */
export function sizeText(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  if (bytes < 1024) return exact;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  return `${exact} (${Number(value.toFixed(1))} ${unit})`;
}

/** `maxMessageBytes` of a bus's options, checked (at least 1 KiB; RabbitMQ takes at most 512 MiB). */
export function checkedMaxMessageBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(value) || value < 1024 || value > 512 * 1024 * 1024) {
    throw new MessageBusError(`maxMessageBytes must be an integer from 1024 to ${512 * 1024 * 1024} (got ${value})`);
  }
  return value;
}

/** The dead-letter sink failed; the message it failed on stays in the dead-letter queue. */
export class DeadLetterDrainError extends MessageBusError {
  constructor(
    readonly deadLetterQueue: string,
    /** messages moved out before the failure */
    readonly drained: number,
    cause: unknown,
  ) {
    super(
      `dead-letter sink failed after ${drained} message(s) from '${deadLetterQueue}': ${errorMessage(cause)}; ` +
        'the failed message stays in the dead-letter queue',
      { cause },
    );
    this.name = 'DeadLetterDrainError';
  }
}

/** A readable message for anything thrown (Nest's RPC filters throw plain objects). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
