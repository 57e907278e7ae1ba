import fc from 'fast-check';

/**
 * Values no API should trust, as fast-check arbitraries: strings (unicode, lone surrogates, NUL,
 * very long), numbers (beyond int4 and double, negative zero, fractions, numbers JSON can write but
 * not hold), other kinds, unknown and prototype-polluting keys, deep nesting, and JSON text that is
 * not JSON. Shared by the REST and the queue fuzzers.
 */

/** JSON text written as is into a document (`1e400`, 10,000 nested arrays), which JSON.stringify cannot write. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON.stringify, but RawJson values are written verbatim. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : toJsonText(v))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const LONG_STRING = 'x'.repeat(70_000);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\t\n',
    'x'.repeat(256),
    LONG_STRING,
    'a\u0000b',
    '\u0000',
    '\ud800',
    'a\udfffb',
    '\u202eevil',
    '\u200b',
    '\ufeffname',
    '\uffff',
    '😀🏳️‍🌈',
    'é'.normalize('NFD'),
    '集群',
    'ｆｕｌｌｗｉｄｔｈ',
    '../../etc/passwd',
    '..',
    '.',
    '%00',
    '%zz',
    "' OR '1'='1' --",
    '"; DROP TABLE clusters; --',
    '${jndi:ldap://x/a}',
    '{{7*7}}',
    '<script>alert(1)</script>',
    'a\r\nX-Injected: 1',
    '1e400',
    '-0',
    '0x10',
    'NaN',
    'Infinity',
    'null',
    'true',
    '2147483648',
    '-2147483649',
    '99999999999999999999',
    ' 1 ',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '__proto__',
    'constructor',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.uuid(),
  fc.string({ unit: 'binary', minLength: 256, maxLength: 2000 }),
);

/** Numbers an integer or size field must refuse or hold, including ones only JSON text can say. */
export const hostileNumber: fc.Arbitrary<number | RawJson> = fc.oneof(
  fc.constantFrom<number | RawJson>(
    0,
    -1,
    -0,
    1.5,
    0.1,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 53 + 2,
    -(2 ** 53) - 2,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    1e20,
    new RawJson('1e400'),
    new RawJson('-1e400'),
    new RawJson('123456789012345678901234567890'),
    new RawJson('1.0'),
    new RawJson('1E2'),
    new RawJson('-0.0'),
    new RawJson('0.000000000000000000000000000001'),
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((n) => new RawJson(n.toString())),
);

/** Keys a handler might not expect: unknown, empty, prototype-polluting, with NUL, very long. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'a\u0000b', '\ud800', 'x'.repeat(300), 'toString', 'valueOf', 'hasOwnProperty', 'id', 'project', 'user'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

/** `depth` levels of arrays or objects, as JSON text (JSON.parse takes them; recursive code may not). */
export function deeplyNested(depth: number, kind: 'array' | 'object'): RawJson {
  return kind === 'array' ? new RawJson('['.repeat(depth) + ']'.repeat(depth)) : new RawJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

export const hostileNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(33, 200, 1000, 10_000, 100_000), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, kind]) => deeplyNested(depth, kind));

/** Leaves of every kind, hostile ones first. */
export const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: hostileNumber, weight: 4 },
  { arbitrary: fc.constantFrom(true, false, null), weight: 2 },
  { arbitrary: fc.constantFrom([], {}, [null], { '': null }), weight: 1 },
);

/** An object built from entries, so that `__proto__` is an own key (as JSON.parse makes it), not the prototype. */
export const objectOf = (key: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>, maxKeys = 4): fc.Arbitrary<Record<string, unknown>> =>
  fc.array(fc.tuple(key, value), { maxLength: maxKeys }).map((entries) => Object.fromEntries(entries));

/** Any JSON value with hostile leaves and keys, a few levels deep, or very deep. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileNesting, weight: 1 },
  {
    arbitrary: fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        hostileLeaf,
        fc.array(tie('value'), { maxLength: 4 }),
        objectOf(fc.oneof(hostileKey, fc.constantFrom('name', 'count', 'spec', 'type', 'metadata')), tie('value')),
      ),
    })).value,
    weight: 8,
  },
);

/** Bytes that are not a JSON document, or not text at all. */
export const malformedJsonText: fc.Arbitrary<Buffer> = fc.oneof(
  fc
    .constantFrom(
      '{',
      '}',
      '{"a":}',
      '{"a":1,}',
      '[1,2',
      "{'a': 1}",
      '{"a": NaN}',
      '{"a": Infinity}',
      '{"a": undefined}',
      '{a: 1}',
      '"unterminated',
      '{"a":"\\x41"}',
      '{"a":"\\ud800"}',
      '{"\\u0000":1}',
      '{"a":1}{"b":2}',
      '{"a":1} trailing',
      '\ufeff{"a":1}',
      '/* comment */ {}',
      'null',
      'true',
      '0',
      '""',
      '[]',
      ' ',
      'tru',
      '01',
      '-',
      '{"a":1e999999}',
      '{"cluster": {"name": "a", "name": "b"}}',
    )
    .map((t) => Buffer.from(t, 'utf8')),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from([0xc0, 0xaf, 0xff, 0xfe, 0x7b, 0x7d])),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => Buffer.from(s, 'utf8')),
);
