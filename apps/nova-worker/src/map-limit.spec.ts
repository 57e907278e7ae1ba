import { mapLimit } from './map-limit';

/** a call that resolves (or rejects) when its test says so, counting the calls in flight */
class Calls {
  inFlight = 0;
  maxInFlight = 0;
  readonly started: number[] = [];
  private readonly pending = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();

  fn = (item: number): Promise<string> => {
    this.started.push(item);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<string>((resolve, reject) => this.pending.set(item, { resolve, reject })).finally(() => this.inFlight--);
  };

  resolve(item: number): void {
    this.pending.get(item)!.resolve(`r${item}`);
  }

  reject(item: number): void {
    this.pending.get(item)!.reject(new Error(`failed ${item}`));
  }
}

const tick = () => new Promise((r) => setImmediate(r));

describe('mapLimit', () => {
  it('keeps at most `limit` calls in flight and the results in the input order', async () => {
    const calls = new Calls();
    const done = mapLimit([0, 1, 2, 3, 4, 5], 3, calls.fn);
    await tick();
    expect(calls.started).toEqual([0, 1, 2]);
    for (const i of [2, 0, 1]) calls.resolve(i);
    await tick();
    expect(calls.started).toEqual([0, 1, 2, 3, 4, 5]);
    for (const i of [5, 4, 3]) calls.resolve(i);

    expect(await done).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(calls.maxInFlight).toBe(3);
  });

  it('starts no call after one failed, and throws its error once the calls in flight have settled', async () => {
    const calls = new Calls();
    let settled = false;
    const done = mapLimit([0, 1, 2, 3, 4, 5], 2, calls.fn).finally(() => (settled = true));
    done.catch(() => undefined);
    await tick();
    calls.reject(0);
    await tick();
    // the other call is still in flight: nothing is thrown yet, and nothing new has started
    expect(settled).toBe(false);
    expect(calls.started).toEqual([0, 1]);
    calls.resolve(1);

    await expect(done).rejects.toThrow('failed 0');
    expect(calls.started).toEqual([0, 1]);
    expect(calls.inFlight).toBe(0);
  });

  it('maps nothing to nothing', async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
  });
});
