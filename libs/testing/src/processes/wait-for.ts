export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface WaitOptions {
  timeoutMs?: number;
  everyMs?: number;
  /** called before every probe: throw to give up early (a process that exited) */
  alive?: () => void;
}

/** Polls `probe` until it returns something truthy; the error names `what` and the probe's last error. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, options: WaitOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    options.alive?.();
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      lastError = e;
    }
    await sleep(options.everyMs ?? 100);
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}
