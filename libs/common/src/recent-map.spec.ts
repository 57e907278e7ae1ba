import { RecentMap } from './recent-map';

describe('RecentMap', () => {
  it('drops the least recently set key beyond its capacity', () => {
    const map = new RecentMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('b')).toBe(2);
    expect(map.get('c')).toBe(3);
  });

  it('keeps a key read since as recently used, and drops the one not read', () => {
    const map = new RecentMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
  });

  it('setting a kept key again makes it the most recently used, without growing', () => {
    const map = new RecentMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(10);
  });

  it('reading a missing key changes nothing', () => {
    const map = new RecentMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    expect(map.get('x')).toBeUndefined();
    map.set('c', 3);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('b')).toBe(2);
  });

  it('keeps a falsy value and refreshes it like any other', () => {
    const map = new RecentMap<string, number>(2);
    map.set('zero', 0).set('b', 2);
    expect(map.get('zero')).toBe(0);
    map.set('c', 3);
    expect(map.get('zero')).toBe(0);
    expect(map.get('b')).toBeUndefined();
  });

  it('deletes', () => {
    const map = new RecentMap<string, number>(3);
    map.set('a', 1);
    expect(map.delete('a')).toBe(true);
    expect(map.delete('a')).toBe(false);
    expect(map.size).toBe(0);
  });

  it('refuses a capacity that is not a whole number of at least 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new RecentMap(bad)).toThrow(RangeError);
  });
});
