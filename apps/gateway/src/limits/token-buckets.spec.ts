import { TokenBuckets } from './token-buckets';

describe('TokenBuckets', () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => (clock = 1_000_000));

  it('grants a burst, then one request per 1/rate seconds, and says how long to wait', () => {
    const buckets = new TokenBuckets(2, 3, 100, now);
    expect([1, 2, 3].map(() => buckets.take('p'))).toEqual([0, 0, 0]);
    expect(buckets.take('p')).toBeCloseTo(0.5);
    clock += 250;
    expect(buckets.take('p')).toBeCloseTo(0.25);
    clock += 250;
    expect(buckets.take('p')).toBe(0);
    expect(buckets.take('p')).toBeCloseTo(0.5);
  });

  it('refills to the burst and no further', () => {
    const buckets = new TokenBuckets(10, 2, 100, now);
    buckets.take('p');
    buckets.take('p');
    clock += 60_000;
    expect([buckets.take('p'), buckets.take('p')]).toEqual([0, 0]);
    expect(buckets.take('p')).toBeGreaterThan(0);
  });

  it('keeps one bucket per key', () => {
    const buckets = new TokenBuckets(1, 1, 100, now);
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBeCloseTo(1);
    expect(buckets.take('b')).toBe(0);
  });

  it('keeps at most maxKeys buckets, forgetting the least recently used first', () => {
    const buckets = new TokenBuckets(1, 1, 3, now);
    for (const key of ['a', 'b', 'c']) buckets.take(key);
    buckets.take('a'); // a is now the most recently used (and empty)
    for (let i = 0; i < 50; i++) buckets.take(`k${i}`);
    expect(buckets.size).toBe(3);
    // a was forgotten with the others: it starts full again
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('k49')).toBeCloseTo(1);
  });

  it('refuses a rate or burst that could never grant a request', () => {
    expect(() => new TokenBuckets(0, 5)).toThrow(RangeError);
    expect(() => new TokenBuckets(1, 0)).toThrow(RangeError);
  });
});
