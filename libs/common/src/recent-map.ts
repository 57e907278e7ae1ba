/**
 * A map that keeps at most `capacity` entries, the least recently used dropped first: the caches
 * of a long-running service (validated tokens, trusts, Nova clients per trust, rate buckets, the
 * names a project may not see) are each bounded by this one rule instead of their own copy of it.
 *
 * A JavaScript Map iterates in insertion order, so an entry used is deleted and set again, and the
 * first key is always the least recently used one.
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a RecentMap keeps a whole number of at least 1 entries, not ${capacity}`);
  }

  /** The value under `key`, which becomes the most recently used; undefined when there is none. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Keeps `value` under `key` as the most recently used; drops the least recently used beyond the capacity. */
  set(key: K, value: V): this {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
