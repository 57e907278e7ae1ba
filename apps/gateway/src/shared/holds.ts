/**
 * At most one holder per key within this process, without a queue: `take` holds a key nobody
 * holds, `free` waits until nobody does. Keys nobody holds are forgotten.
 */
export class Holds {
  /** per held key, what resolves when its holder releases it */
  private readonly held = new Map<string, Promise<void>>();

  /** Resolves once nobody holds `key` (at once when nobody does). */
  async free(key: string): Promise<void> {
    for (let holder = this.held.get(key); holder; holder = this.held.get(key)) await holder;
  }

  /** Holds `key` if nobody does: its release (calling it again does nothing), else null. */
  take(key: string): (() => void) | null {
    if (this.held.has(key)) return null;
    let resolve!: () => void;
    const holder = new Promise<void>((r) => (resolve = r));
    this.held.set(key, holder);
    return () => {
      if (this.held.get(key) !== holder) return;
      this.held.delete(key);
      resolve();
    };
  }

  /** keys held (for tests) */
  get size(): number {
    return this.held.size;
  }
}
