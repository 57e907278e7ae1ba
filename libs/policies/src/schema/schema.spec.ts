import { renderSchema } from './render';
import { AllowedValues, Schema, SchemaError, resolveSpec } from './schema';
import { formatSpecVersion, normaliseEnvelope, specTypeName } from './spec';

const resolve = (item: ReturnType<(typeof Schema)[keyof typeof Schema]>, value: unknown) => item.resolve(value, 'properties.x');
const message = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

describe('schema items (Senlin coercions and messages)', () => {
  it.each([
    [Schema.String(), 'abc', 'abc'],
    [Schema.String(), 5, '5'],
    [Schema.String(), true, 'True'],
    [Schema.Integer(), 12, 12],
    [Schema.Integer(), '12', 12],
    [Schema.Integer(), ' -3 ', -3],
    [Schema.Integer(), 2.7, 2],
    [Schema.Integer(), true, 1],
    [Schema.Number(), '1.5', 1.5],
    [Schema.Number(), '7', 7],
    [Schema.Number(), 0.25, 0.25],
    [Schema.Boolean(), 'YES', true],
    [Schema.Boolean(), 'off', false],
    [Schema.Boolean(), 't', true],
    [Schema.Boolean(), 0, false],
    [Schema.List({}), ['a'], ['a']],
    [Schema.Map({}), '{"a": 1}', { a: 1 }],
  ].map(([item, value, expected]) => [(item as { type: string }).type, value, expected, item] as const))(
    '%s resolves %p to %p',
    (_type, value, expected, item) => {
      expect(resolve(item as ReturnType<typeof Schema.String>, value)).toEqual(expected);
    },
  );
  it('turns a string into a list of characters, as Python did', () => {
    expect(resolve(Schema.List({}), 'ab')).toEqual(['a', 'b']);
  });

  it.each([
    [Schema.String(), null, "properties.x: The value 'None' is not a valid string."],
    [Schema.Integer(), 'x', "properties.x: The value 'x' is not a valid Integer"],
    [Schema.Integer(), '1.5', "properties.x: The value '1.5' is not a valid Integer"],
    [Schema.Number(), 'abc', "properties.x: The value 'abc' is not a valid number."],
    [Schema.Boolean(), 'maybe', "properties.x: The value 'maybe' is not a valid Boolean"],
    [Schema.Boolean(), 2, "properties.x: The value '2' is not a valid Boolean"],
    [Schema.List({}), { a: 1 }, "properties.x: '{'a': 1}' is not a List"],
    [Schema.Map({}), [1, 2], "properties.x: '[1, 2]' is not a Map"],
    [Schema.Map({}), 'nope', "properties.x: 'nope' is not a Map"],
    [
      Schema.String({ constraints: [new AllowedValues(['a', 'b', 'c'])] }),
      'x',
      "properties.x: 'x' must be one of the allowed values: a, b, c",
    ],
  ].map(([item, value, expected]) => [(item as { type: string }).type, value, expected, item] as const))(
    '%s refuses %p',
    (_type, value, expected, item) => {
      expect(message(() => resolve(item as ReturnType<typeof Schema.String>, value))).toBe(expected);
    },
  );

  it('checks every element of a list value against AllowedValues', () => {
    const item = Schema.List({ constraints: [new AllowedValues(['a', 'b'])] });
    expect(resolve(item, ['a', 'b'])).toEqual(['a', 'b']);
    expect(message(() => resolve(item, ['a', 'z']))).toBe("properties.x: '['a', 'z']' must be one of the allowed values: a, b");
  });
});

describe('nested specs', () => {
  const schema = {
    zones: Schema.List({
      schema: Schema.Map({ schema: { name: Schema.String(), weight: Schema.Integer({ default: 100 }) } }),
    }),
    group: Schema.Map({ schema: { name: Schema.String({ required: true }) } }),
    flag: Schema.Boolean({ default: false }),
  };

  it('fills defaults, keeps every key, and leaves an absent Map without default null', () => {
    expect(resolveSpec(schema, { zones: [{ name: 'az1' }] }, 'properties')).toEqual({
      zones: [{ name: 'az1', weight: 100 }],
      group: null,
      flag: false,
    });
  });

  it('names the path of a nested error', () => {
    const e = (() => {
      try {
        resolveSpec(schema, { zones: [{ name: 'a' }, { name: 'b', weight: 'x' }] }, 'properties');
      } catch (err) {
        return err as SchemaError;
      }
    })();
    expect(e).toBeInstanceOf(SchemaError);
    expect(e?.path).toBe('properties.zones[1].weight');
    expect(e?.message).toBe("properties.zones[1].weight: The value 'x' is not a valid Integer");
  });

  it('refuses unknown keys and missing required keys', () => {
    expect(message(() => resolveSpec(schema, { bogus: 1 }, 'properties'))).toBe("properties.bogus: Unrecognizable spec item 'bogus'");
    expect(message(() => resolveSpec(schema, { group: {} }, 'properties'))).toBe("properties.group.name: Required spec item 'name' not provided");
  });
});

describe('spec envelope', () => {
  it.each([
    [1, '1.0'],
    [2, '2.0'],
    [1.1, '1.1'],
    ['1.0', '1.0'],
    ['1', '1'],
  ])('formats version %p as %p', (v, expected) => {
    expect(formatSpecVersion(v)).toBe(expected);
  });

  it.each([
    ['not a map', 'The provided spec is not a map.'],
    [{ version: 1 }, "The 'type' key is missing from the provided spec map."],
    [{ type: 't' }, "The 'version' key is missing from the provided spec map."],
  ])('refuses %p', (spec, expected) => {
    expect(message(() => specTypeName(spec))).toBe(expected);
  });

  it('defaults description and refuses other top-level keys', () => {
    expect(normaliseEnvelope({ type: 't', version: 1, properties: { a: 1 } })).toEqual({
      type: 't',
      version: '1.0',
      description: '',
      properties: { a: 1 },
    });
    expect(message(() => normaliseEnvelope({ type: 't', version: 1, properties: {}, bogus: 1 }))).toBe("bogus: Unrecognizable spec item 'bogus'");
    expect(message(() => normaliseEnvelope({ type: 't', version: 1 }))).toBe("properties: Required spec item 'properties' not provided");
  });
});

describe('renderSchema', () => {
  it('renders type, required, updatable, description, default, constraints and nested schemas', () => {
    const rendered = renderSchema({
      zones: Schema.List({
        description: 'zones',
        schema: Schema.Map({ schema: { weight: Schema.Integer({ default: 100 }) } }),
      }),
      p: Schema.String({ default: 'a', constraints: [new AllowedValues(['a', 'b'])] }),
    });
    expect(rendered).toEqual({
      zones: {
        type: 'List',
        required: false,
        updatable: false,
        description: 'zones',
        schema: { '*': { type: 'Map', required: false, updatable: false, schema: { weight: { type: 'Integer', required: false, updatable: false, default: 100 } } } },
      },
      p: { type: 'String', required: false, updatable: false, default: 'a', constraints: [{ type: 'AllowedValues', constraint: ['a', 'b'] }] },
    });
  });
});
