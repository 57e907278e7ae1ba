import { Holds } from './holds';

const tick = () => new Promise((r) => setImmediate(r));

describe('Holds', () => {
  it('lets one caller hold a key, and the next take it only once it is released', async () => {
    const holds = new Holds();
    const release = holds.take('cluster-1');
    expect(release).not.toBeNull();
    expect(holds.take('cluster-1')).toBeNull();
    let freed = false;
    const waiting = holds.free('cluster-1').then(() => (freed = true));
    await tick();
    expect(freed).toBe(false);
    release!();
    await waiting;
    const next = holds.take('cluster-1');
    expect(next).not.toBeNull();
    next!();
    expect(holds.size).toBe(0);
  });

  it('does not make other keys wait', async () => {
    const holds = new Holds();
    const a = holds.take('a');
    await holds.free('b');
    const b = holds.take('b');
    expect(b).not.toBeNull();
    b!();
    a!();
    expect(holds.size).toBe(0);
  });

  it('frees every waiter at once, and a release called twice does not release the next holder', async () => {
    const holds = new Holds();
    const first = holds.take('k')!;
    const freed: string[] = [];
    const waiters = ['w1', 'w2', 'w3'].map((w) => holds.free('k').then(() => freed.push(w)));
    first();
    await Promise.all(waiters);
    expect(freed).toEqual(['w1', 'w2', 'w3']);
    const second = holds.take('k')!;
    first();
    expect(holds.take('k')).toBeNull();
    second();
    expect(holds.size).toBe(0);
  });

  it('keeps a waiter waiting while another caller took the key before it ran', async () => {
    const holds = new Holds();
    const first = holds.take('k')!;
    let freed = false;
    const waiting = holds.free('k').then(() => (freed = true));
    first();
    // taken again before the waiter's continuation runs
    const second = holds.take('k')!;
    await tick();
    expect(freed).toBe(false);
    second();
    await waiting;
    expect(freed).toBe(true);
  });
});
