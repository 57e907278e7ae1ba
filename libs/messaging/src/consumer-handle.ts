import type { ConsumerHandle } from './bus.port';

/**
 * Both adapters return this handle. `cancel()` is the graceful stop: no new deliveries, in-flight
 * handlers finish and their outcomes are applied (bounded by the adapter's shutdown grace).
 */
export interface AbortableConsumerHandle extends ConsumerHandle {
  /**
   * Stop at once, as if the consumer process died: the messages it holds unacked go back to the
   * queue (redelivered) and the outcomes of handlers still running are dropped.
   */
  abort(): Promise<void>;
}

/** Resolves when `work` settles or after `ms`, whichever comes first; true when `work` settled. */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const, () => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
