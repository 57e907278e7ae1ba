import { RecentMap } from '@trellis/common';

interface Bucket {
  tokens: number;
  /** when `tokens` was counted, ms */
  at: number;
}

/**
 * Token buckets by key (a project, a webhook receiver): each holds up to `burst` tokens and gains
 * `ratePerSecond` a second; a request takes one. At most `maxKeys` buckets are kept, the least
 * recently used dropped first; a dropped bucket comes back full, which forgives only a key that
 * was idle while `maxKeys` others were used.
 */
export class TokenBuckets {
  private readonly buckets: RecentMap<string, Bucket>;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    maxKeys = 20_000,
    private readonly now: () => number = Date.now,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError(`a bucket needs a rate above 0 and a burst of at least 1, got ${ratePerSecond} and ${burst}`);
    this.buckets = new RecentMap(maxKeys);
  }

  /** Takes a token of `key`'s bucket: 0 when it had one, else the seconds until it has one (nothing taken). */
  take(key: string): number {
    const now = this.now();
    const known = this.buckets.get(key);
    let tokens = this.burst;
    if (known) tokens = Math.min(this.burst, known.tokens + (Math.max(0, now - known.at) / 1000) * this.ratePerSecond);
    const granted = tokens >= 1;
    this.buckets.set(key, { tokens: granted ? tokens - 1 : tokens, at: now });
    return granted ? 0 : (1 - tokens) / this.ratePerSecond;
  }

  /** how many buckets are kept */
  get size(): number {
    return this.buckets.size;
  }
}
