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
