import * as fc from 'fast-check';
import { JsonText } from './json-text';
import { sortKeys, sortedForJson, sortedJsonText, toWireJson } from './sorted-json';

class Entity {
  zeta = 1;
  alpha = { b: 2, a: [{ y: 1, x: null }] };
}

describe('sortedForJson', () => {
  const cases: Array<[string, unknown]> = [
    ['a primitive', 'text'],
    ['null', null],
    ['an object out of order, nested', { b: 1, a: { d: [3, { f: 1, e: 2 }], c: 'x' } }],
    ['an object in order with a child out of order', { a: 1, b: { d: 1, c: 2 } }],
    ['integer-like and symbol-like keys', { b: 1, '10': 2, '9': 3, '!': 4, a: 5 }],
    ['undefined, functions and holes', { b: undefined, a: () => 1, c: [undefined, , 1] }],
    ['dates and toJSON', { when: new Date(Date.UTC(2026, 10, 26)), buf: Buffer.from('ab'), custom: { toJSON: () => ({ z: 1, y: 2 }) } }],
    ['a class instance', new Entity()],
    ['an array of ids', { clusters: [{ nodes: ['n2', 'n1'], id: 'c1' }, { id: 'c2', nodes: [] }] }],
  ];

  it.each(cases)('serialises %s as the sortKeys replacer does', (_what, value) => {
    expect(JSON.stringify(sortedForJson(value))).toBe(JSON.stringify(value, sortKeys));
  });

  it('keeps what is already in order, and never changes its input', () => {
    const ordered = { a: ['x', 'y'], b: { c: 1 } };
    expect(sortedForJson(ordered)).toBe(ordered);
    const unordered = { b: 1, a: { d: 1, c: 2 } };
    const copy = structuredClone(unordered);
    sortedForJson(unordered);
    expect(unordered).toEqual(copy);
    expect(Object.keys(unordered)).toEqual(['b', 'a']);
  });

  it('toWireJson sorts keys and keeps JSON values only', () => {
    expect(JSON.stringify(toWireJson({ b: 1, a: undefined, c: new Date(0) }))).toBe('{"b":1,"c":"1970-01-01T00:00:00.000Z"}');
    expect(toWireJson(undefined)).toBeNull();
  });
});

/** `value` with the objects and arrays `pick` chooses replaced by their text as JsonText (at any depth). */
function withTexts(value: unknown, pick: () => boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (pick()) return new JsonText(JSON.stringify(value, sortKeys));
  if (Array.isArray(value)) return value.map((item) => withTexts(item, pick));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withTexts(v, pick)]));
}

describe('sortedJsonText', () => {
  const cases: Array<[string, unknown]> = [
    ['a primitive', 'text'],
    ['undefined', undefined],
    ['an object out of order, nested', { b: 1, a: { d: [3, { f: 1, e: 2 }], c: 'x' } }],
    ['integer-like and symbol-like keys', { b: 1, '10': 2, '9': 3, '!': 4, a: 5 }],
    ['undefined, functions and holes', { b: undefined, a: () => 1, c: [undefined, , 1] }],
    ['dates and toJSON', { when: new Date(Date.UTC(2026, 10, 26)), custom: { toJSON: () => ({ z: 1, y: 2 }) } }],
    ['a class instance', new Entity()],
  ];

  it.each(cases)('writes %s as the sortKeys replacer does', (_what, value) => {
    expect(sortedJsonText(value)).toBe(JSON.stringify(value, sortKeys));
  });

  it('writes a page of clusters whose node ids are JsonText as if they were arrays', () => {
    const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => `node-${from + i}`);
    const plain = {
      clusters: [
        { name: 'b', id: 'c1', nodes: ids(3, 0), policies: [], metadata: { z: 1, a: undefined }, timeout: null },
        { id: 'c2', name: 'a', nodes: [], policies: ids(1, 9), metadata: {}, dependents: { y: [2, { k: 1, j: 0 }] } },
      ],
    };
    const texts = {
      clusters: plain.clusters.map((c) => ({ ...c, nodes: new JsonText(JSON.stringify(c.nodes)), policies: new JsonText(JSON.stringify(c.policies)) })),
    };
    expect(sortedJsonText(texts)).toBe(JSON.stringify(plain, sortKeys));
    expect(sortedJsonText(new JsonText('["x","y"]'))).toBe('["x","y"]');
    const beside = { z: new JsonText('[1]'), b: undefined, f: () => 1, a: [undefined, () => 1, new JsonText('{"k":"é"}'), { y: 1, x: null }] };
    expect(sortedJsonText(beside)).toBe('{"a":[null,null,{"k":"é"},{"x":null,"y":1}],"z":[1]}');
  });

  it('never parses a JsonText, and anything else that serialises one gets its value', () => {
    const parse = jest.spyOn(JsonText.prototype, 'toJSON');
    try {
      const body = { cluster: { nodes: new JsonText<string[]>('["n1","n2"]'), id: 'c' } };
      expect(sortedJsonText(body)).toBe('{"cluster":{"id":"c","nodes":["n1","n2"]}}');
      expect(parse).not.toHaveBeenCalled();
      expect(toWireJson(body)).toEqual({ cluster: { id: 'c', nodes: ['n1', 'n2'] } });
      expect(JSON.stringify(sortedForJson(body))).toBe('{"cluster":{"id":"c","nodes":["n1","n2"]}}');
    } finally {
      parse.mockRestore();
    }
  });

  it('writes any JSON value, with any of its parts as JsonText, as the sortKeys replacer writes the value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }), (value, picks) => {
        let i = 0;
        const parted = withTexts(value, () => picks[i++ % picks.length]);
        expect(sortedJsonText(parted)).toBe(JSON.stringify(value, sortKeys));
      }),
      { numRuns: 500 },
    );
  });
});
