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
  /** insertion order is use order: the first key is the least recently used */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly maxKeys = 20_000,
    private readonly now: () => number = Date.now,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError(`a bucket needs a rate above 0 and a burst of at least 1, got ${ratePerSecond} and ${burst}`);
  }

  /** Takes a token of `key`'s bucket: 0 when it had one, else the seconds until it has one (nothing taken). */
  take(key: string): number {
    const now = this.now();
    const known = this.buckets.get(key);
    let tokens = this.burst;
    if (known) {
      this.buckets.delete(key);
      tokens = Math.min(this.burst, known.tokens + (Math.max(0, now - known.at) / 1000) * this.ratePerSecond);
    }
    const granted = tokens >= 1;
    this.buckets.set(key, { tokens: granted ? tokens - 1 : tokens, at: now });
    while (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    return granted ? 0 : (1 - tokens) / this.ratePerSecond;
  }

  /** how many buckets are kept */
  get size(): number {
    return this.buckets.size;
  }
}
