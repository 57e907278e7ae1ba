import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What every log line written while handling one piece of work carries, whichever service and
 * code wrote it: above all the correlation id, the `x-openstack-request-id` of the request that
 * started an action, which then follows the action through its messages, the engine's decision and
 * the worker's Nova calls (`grep <id>` over all services' logs tells the story of one action).
 */
export interface LogContext {
  correlation_id?: string;
  action_id?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `work` with `context` on every log line it (and what it starts) writes. */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  return storage.run(context, work);
}

/**
 * Runs `work` outside any context: for timers and loops that outlive the request that started
 * them (a poller kicked while a message was handled must not write that message's id for ever).
 */
export function withoutLogContext<T>(work: () => T): T {
  return storage.exit(work);
}

/** The context of the work running now, if any. */
export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}

/** `req-<uuid>`: the request id OpenStack services make, and accept from a client as its global request id. */
export const OPENSTACK_REQUEST_ID = /^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The current correlation id when it is an OpenStack request id (others, e.g. `resume-<action>`, are not sent to Nova). */
export function currentOpenStackRequestId(): string | undefined {
  const id = storage.getStore()?.correlation_id;
  return id !== undefined && OPENSTACK_REQUEST_ID.test(id) ? id : undefined;
}
