/**
 * Map over items with at most `limit` calls in flight; results keep the input order. After a call
 * fails no new call starts, and the failure is thrown once the calls in flight have settled: nothing
 * runs on in the background when the caller goes on (to put the order off after a transient error,
 * say, while another worker may take it).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const run = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i]);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const runners = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, run));
  const rejected = runners.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected) throw rejected.reason;
  return results;
}
