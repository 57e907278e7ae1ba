import fc from 'fast-check';
import { clonePlain, copyToExtend, sortedKeys, withKeys } from './plain-data';

/**
 * Own keys in order with their values, and the kind of object: what a spread or a clone must
 * reproduce. By constructor name, because jest's structuredClone builds objects of another realm.
 */
function shape(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const keys = Reflect.ownKeys(value).map((k) => [String(k), shape(Object.getOwnPropertyDescriptor(value, k)?.value)]);
  return { kind: (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'null', keys };
}

describe('copyToExtend', () => {
  it('equals the spread it replaces for any JSON object, in key order, and is a new object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const out = copyToExtend(value);
        expect(out).not.toBe(value);
        expect(shape(out)).toEqual(shape({ ...value }));
      }),
    );
  });

  it('gives an empty object for null and undefined, as the spread of `x ?? {}` did', () => {
    expect(shape(copyToExtend(null))).toEqual(shape({}));
    expect(shape(copyToExtend(undefined))).toEqual(shape({}));
  });

  it('keeps an own __proto__ key as data, as the spread does, instead of setting the prototype', () => {
    const value = JSON.parse('{"count": 1, "__proto__": {"polluted": true}}') as object;
    const out = copyToExtend(value);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.polluted).toBeUndefined();
    expect(shape(out)).toEqual(shape({ ...value }));
  });
});

describe('withKeys', () => {
  it('equals the spread it replaces for any JSON base, in key order', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.constant(undefined)), fc.dictionary(fc.string(), fc.jsonValue()), (base, additions) => {
        expect(shape(withKeys(base, additions))).toEqual(shape({ ...(base as object), ...additions }));
      }),
    );
  });

  it('keeps an own __proto__ key of the additions as data too (found by the property above)', () => {
    const additions = JSON.parse('{"__proto__": false}') as object;
    const out = withKeys('', additions);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(shape(out)).toEqual(shape({ ...additions }));
  });

  it('keeps an own __proto__ key as data, as the spread does, instead of setting the prototype', () => {
    const base = JSON.parse('{"__proto__": {"polluted": true}, "count": 1}') as object;
    const out = withKeys(base, { zones: { az1: 1 } });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as Record<string, unknown>).polluted).toBeUndefined();
    expect(shape(out)).toEqual(shape({ ...base, zones: { az1: 1 } }));
  });

  it('overrides a base key in place and appends new keys', () => {
    expect(Object.entries(withKeys({ count: 1, zones: {} }, { count: 2, candidates: ['a'] }))).toEqual([
      ['count', 2],
      ['zones', {}],
      ['candidates', ['a']],
    ]);
  });
});

describe('clonePlain', () => {
  it('equals structuredClone for any JSON value and shares nothing with it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = clonePlain(value);
        expect(shape(copy)).toEqual(shape(structuredClone(value)));
        if (value !== null && typeof value === 'object') expect(copy).not.toBe(value);
      }),
    );
  });

  it('hands what is not plain data to structuredClone', () => {
    const date = new Date(0);
    expect(clonePlain({ at: date }).at).toEqual(date);
    expect(clonePlain({ at: date }).at).not.toBe(date);
    const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
    expect(1 in clonePlain(sparse)).toBe(false);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const cloned = clonePlain(cycle);
    expect(cloned.self).toBe(cloned);
    expect(() => clonePlain({ f: () => 1 })).toThrow();
    expect(shape(clonePlain(JSON.parse('{"__proto__": 1}')))).toEqual(shape(structuredClone(JSON.parse('{"__proto__": 1}'))));
    expect(Object.getPrototypeOf(clonePlain(Object.assign(Object.create(null), { a: 1 })))).toBe(Object.prototype);
  });

  it('leaves symbol keys out, as structuredClone does', () => {
    const tag = Symbol('tag');
    const value = { a: 1, [tag]: 2, nested: { [tag]: { b: 3 }, c: [4] } };
    const copy = clonePlain(value);
    expect(Object.getOwnPropertySymbols(copy)).toEqual([]);
    expect(Object.getOwnPropertySymbols(copy.nested)).toEqual([]);
    expect(shape(copy)).toEqual(shape(structuredClone(value)));
  });
});

describe('sortedKeys', () => {
  it('equals Object.keys(...).sort() for any object, short or long', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('az1', 'az10', 'az2', 'AZ1', '1', '01', '10', '')), fc.integer(), { maxKeys: 40 }), (record) => {
        expect(sortedKeys(record)).toEqual(Object.keys(record).sort());
      }),
    );
  });
});
