import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { BaseRpcContext, type CustomTransportStrategy, type MessageHandler as NestHandler, Server } from '@nestjs/microservices';
import { Exchanges, type QueueSpec } from '@trellis/contracts';
import { lastValueFrom, throwError, type Observable } from 'rxjs';
import { MessageBusError } from './bus-errors';
import { resolveQueues } from './bus-topology';
import type { ConsumerHandle, HandlerOutcome, IncomingMessage, MessageBus } from './bus.port';
import { defaultErrorToOutcome, type ErrorToOutcome } from './error-to-outcome';
import { toOutcome } from './message-codec';

/** `@Ctx() ctx: BusContext` gives a handler the whole message (ids, headers, delivery count). */
export class BusContext extends BaseRpcContext<[IncomingMessage]> {
  getMessage(): IncomingMessage {
    return this.args[0];
  }
}

/**
 * Nest's default RPC exception filter replaces every error that is not an RpcException with
 * `{status: 'error', message: 'Internal server error'}`, which would hide whether a failure is
 * transient. This filter passes the original error through to the transport; register it with
 * `app.useGlobalFilters(new BusExceptionFilter())` (or `@UseFilters` on the handler class).
 */
@Catch()
export class BusExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}

export interface BusTransportOptions {
  /** maps a thrown error to ack / retry / dead-letter (default: defaultErrorToOutcome) */
  errorToOutcome?: ErrorToOutcome;
  /** queues that carry RPC requests (default: the queues bound to `trellis.rpc`) */
  rpcQueues?: string[];
  /** queues declared besides the shared topology, to find their exchange */
  extraQueues?: QueueSpec[];
}

const ACK: HandlerOutcome = { kind: 'ack' };

/**
 * Lets app handlers read like Nest microservices: `@EventPattern('action.requested')` handles queue
 * messages whose AMQP `type` (or, without one, routing key) is the pattern and returns a
 * HandlerOutcome (nothing means ack); `@MessagePattern('cluster.list')` answers RPC requests of that
 * type. It extends Nest's `Server` only for its handler registry (`addHandler`, which Nest's
 * listener wiring calls, and `getHandlerByPattern`); acks, retries and dead-lettering stay in the
 * MessageBus, which this class only drives.
 */
export class BusTransport extends Server implements CustomTransportStrategy {
  private readonly errorToOutcome: ErrorToOutcome;
  private readonly rpcQueues: Set<string>;
  private readonly handles: ConsumerHandle[] = [];

  constructor(
    private readonly bus: MessageBus,
    /** queue → prefetch */
    private readonly queues: Record<string, number>,
    options: BusTransportOptions = {},
  ) {
    super();
    this.errorToOutcome = options.errorToOutcome ?? defaultErrorToOutcome;
    this.rpcQueues = new Set(
      options.rpcQueues ??
        resolveQueues(options.extraQueues)
          .filter((q) => q.exchange === Exchanges.rpc)
          .map((q) => q.name),
    );
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      this.refuseChainedHandlers();
      for (const [queue, prefetch] of Object.entries(this.queues)) {
        this.handles.push(
          this.rpcQueues.has(queue)
            ? await this.bus.serve(queue, (m) => this.answer(m), { prefetch })
            : await this.bus.consume(queue, (m) => this.dispatch(m), { prefetch }),
        );
      }
    } catch (error) {
      await this.close();
      callback(error);
      return;
    }
    callback();
  }

  /** Stops this transport's consumers after their running handlers finished; the bus stays open. */
  async close(): Promise<void> {
    await Promise.all(this.handles.splice(0).map((h) => h.cancel()));
  }

  on(): never {
    throw new MessageBusError('BusTransport emits no events; the MessageBus logs connection problems');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  /** A queue message → its @EventPattern handler → the outcome that drives the ack. */
  async dispatch(message: IncomingMessage): Promise<HandlerOutcome> {
    if (message.parseError) return { kind: 'dead-letter', reason: message.parseError, reasonClass: 'invalid' };
    // The routing key names the message only when it has no type: a typed message nobody handles
    // must not fall through to whatever handles its routing key.
    const pattern = message.type ?? message.routingKey;
    const handler = pattern ? this.getHandlerByPattern(pattern) : null;
    if (!handler?.isEventHandler) {
      return {
        kind: 'dead-letter',
        reasonClass: 'invalid',
        reason: handler
          ? `'${pattern}' is an RPC (@MessagePattern) type, not an event of queue '${message.queue}'`
          : `no handler for message type '${pattern ?? '(none)'}'`,
      };
    }
    try {
      const value = await this.run(handler, message);
      return value === undefined || value === null ? ACK : typeof value === 'object' && 'kind' in value ? toOutcome(value) : ACK;
    } catch (error) {
      return this.errorToOutcome(error);
    }
  }

  /** An RPC request → its @MessagePattern handler → the reply (errors become a 500 reply in the bus). */
  async answer(message: IncomingMessage): Promise<unknown> {
    if (message.parseError) return { error: { code: 400, message: message.parseError } };
    const handler = message.type ? this.getHandlerByPattern(message.type) : null;
    if (!handler || handler.isEventHandler) {
      return { error: { code: 404, message: `no handler for message type '${message.type ?? '(none)'}'` } };
    }
    return (await this.run(handler, message)) ?? null;
  }

  private async run(handler: NestHandler, message: IncomingMessage): Promise<unknown> {
    const result = await handler(message.body, new BusContext([message]));
    return lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
  }

  /** Nest chains two @EventPattern handlers of one pattern; one message has exactly one verdict. */
  private refuseChainedHandlers(): void {
    for (const [pattern, handler] of this.getHandlers()) {
      if (handler.next) {
        throw new MessageBusError(`two @EventPattern handlers for '${pattern}'; one message type needs exactly one handler`);
      }
    }
  }
}
