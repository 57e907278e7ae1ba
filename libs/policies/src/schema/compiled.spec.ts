import fc from 'fast-check';
import { BUILTIN_POLICY_TYPES } from '../builtins';
import { POLICY_TYPE_META, PolicyTypeMeta } from '../framework/policy';
import { isPlainObject } from './py-format';
import { AllowedValues, Schema, SchemaError, SchemaItem, SchemaMap, resolveSpec } from './schema';
import { compileSchemaMap } from './compiled';
import { formatSpecVersion, normaliseEnvelope } from './spec';

/** What a resolution gives: the value as JSON, or the error's class, path and text. */
function outcome(fn: () => unknown): string {
  try {
    return `ok ${JSON.stringify(fn())}`;
  } catch (e) {
    const err = e as Error;
    return `${err.name} ${err instanceof SchemaError ? err.path : ''} ${err.message}`;
  }
}

/** Odd spec values: what JSON can carry, numeric and boolean text, JSON text, nested lists and maps. */
const oddScalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, 1, -3, 2.5, 1e21, '', ' 12 ', '1_000', '1.5', 'yes', 'off', 'None', 'a', 'b', '{"name": "az1"}', '[1]', '{'),
  fc.integer({ min: -5, max: 500 }),
  fc.string({ maxLength: 4 }),
);
const oddValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, oddScalar, tie('list'), tie('map')),
  list: fc.array(tie('value'), { maxLength: 3 }),
  map: fc.dictionary(fc.constantFrom('name', 'weight', 'x', 'type', 'params', '__proto__', 'a'), tie('value'), { maxKeys: 3 }),
})).value;

/** Random schemas built from Senlin's items: defaults (good and bad), required, AllowedValues, nesting. */
function itemArb(depth: number): fc.Arbitrary<SchemaItem> {
  const scalar = fc
    .record({
      kind: fc.constantFrom('String', 'Integer', 'Number', 'Boolean'),
      default: fc.option(oddScalar, { nil: undefined }),
      required: fc.boolean(),
      allowed: fc.option(fc.constantFrom(['a', 'b'], [1, 2, '1'], [true]), { nil: undefined }),
    })
    .map(({ kind, default: d, required, allowed }) =>
      Schema[kind as 'String']({ default: d, required, constraints: allowed ? [new AllowedValues(allowed)] : [] }),
    );
  if (depth === 0) return scalar;
  const list = fc
    .record({ schema: fc.option(itemArb(depth - 1), { nil: undefined }), default: fc.option(fc.constant(['x']), { nil: undefined }), required: fc.boolean() })
    .map((o) => Schema.List(o as { schema?: SchemaItem }));
  const map = fc
    .record({
      schema: fc.option(fc.dictionary(fc.constantFrom('name', 'weight', 'x', 'type', 'params'), itemArb(depth - 1), { maxKeys: 3 }), { nil: undefined }),
      default: fc.option(fc.constant({ k: [1] }), { nil: undefined }),
      required: fc.boolean(),
    })
    .map((o) => Schema.Map(o as { schema?: SchemaMap }));
  return fc.oneof(scalar, list, map);
}

const schemaArb = fc.dictionary(fc.constantFrom('name', 'weight', 'zones', 'x', 'type', 'params', 'hooks'), itemArb(2), { maxKeys: 4 });

describe('compiled schema resolvers', () => {
  it('resolve every spec exactly as resolveSpec does: the same value, or the same error', () => {
    fc.assert(
      fc.property(schemaArb, fc.dictionary(fc.constantFrom('name', 'weight', 'zones', 'x', 'type', 'params', 'hooks', 'extra'), oddValue), (schema, data) => {
        const compiled = compileSchemaMap(schema, 'properties');
        expect(outcome(() => compiled(data))).toBe(outcome(() => resolveSpec(schema, data, 'properties')));
      }),
      { numRuns: 3000 },
    );
  });

  it('resolve the built-in types\' properties as resolveSpec does, for well-formed and odd specs', () => {
    const metas = (BUILTIN_POLICY_TYPES as unknown as Array<Record<symbol, PolicyTypeMeta>>).map((cls) => cls[POLICY_TYPE_META]);
    const zone = fc.record({ name: fc.oneof(fc.constantFrom('az1', 'az2'), oddScalar), weight: fc.oneof(fc.integer({ min: -1, max: 300 }), oddScalar) }, { requiredKeys: [] });
    const properties = fc.record(
      {
        zones: fc.oneof(fc.array(zone, { maxLength: 4 }), oddValue),
        event: fc.oneof(fc.constantFrom('CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT'), oddScalar),
        adjustment: fc.oneof(
          fc.record({ type: fc.constantFrom('CHANGE_IN_CAPACITY', 'CHANGE_IN_PERCENTAGE', 'EXACT_CAPACITY', 'X'), number: oddScalar, min_step: oddScalar, best_effort: oddScalar, cooldown: oddScalar }, { requiredKeys: [] }),
          oddValue,
        ),
        criteria: fc.oneof(fc.constantFrom('OLDEST_FIRST', 'RANDOM', 'YOUNGEST_FIRST'), oddScalar),
        grace_period: oddScalar,
        destroy_after_deletion: oddScalar,
        hooks: fc.oneof(fc.record({ type: fc.constantFrom('zaqar', 'webhook', 'x'), params: oddValue, timeout: oddScalar }, { requiredKeys: [] }), oddValue),
        servergroup: fc.oneof(fc.record({ name: oddScalar, policies: fc.constantFrom('affinity', 'anti-affinity', 'x'), rules: oddValue }, { requiredKeys: [] }), oddValue),
        availability_zone: oddScalar,
        enable_drs_extension: oddScalar,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.constantFrom(...metas), properties, (meta, props) => {
        // keep mostly the type's own keys, so that most specs resolve and the compiled path is exercised
        const own = Object.fromEntries(Object.entries(props).filter(([k]) => k in meta.properties || k === 'grace_period'));
        const compiled = compileSchemaMap(meta.properties, 'properties');
        expect(outcome(() => compiled(own))).toBe(outcome(() => resolveSpec(meta.properties, own, 'properties')));
      }),
      { numRuns: 3000 },
    );
  });

  it('give fresh copies of Map and List defaults to every spec', () => {
    const schema = { hooks: Schema.Map({ default: { params: {} } }), tags: Schema.List({ default: ['a'] }) };
    const compiled = compileSchemaMap(schema, 'properties');
    const a = compiled({});
    const b = compiled({});
    expect(a).toEqual({ hooks: { params: {} }, tags: ['a'] });
    expect(a.hooks).not.toBe(b.hooks);
    expect(a.tags).not.toBe(schema.tags.default);
  });
});

/** HEAD's normaliseEnvelope: the schema walk over a spread copy of the spec. */
function referenceEnvelope(spec: Record<string, unknown>) {
  const ENVELOPE: SchemaMap = {
    type: Schema.String({ required: true }),
    version: Schema.String({ required: true }),
    description: Schema.String({ default: '' }),
    properties: Schema.Map({ required: true }),
  };
  const resolved = resolveSpec(ENVELOPE, { ...spec, version: formatSpecVersion(spec.version) }, '');
  return {
    type: resolved.type,
    version: resolved.version,
    description: resolved.description,
    properties: isPlainObject(spec.properties) ? spec.properties : resolved.properties,
  };
}

describe('normaliseEnvelope', () => {
  it('reads every envelope as the schema walk does, keeping the properties object itself', () => {
    const envelope = fc.dictionary(fc.constantFrom('type', 'version', 'description', 'properties', 'extra', '__proto__'), oddValue);
    const likely = fc.record(
      { type: fc.oneof(fc.constant('senlin.policy.scaling'), oddScalar), version: fc.oneof(fc.constantFrom('1.0', 1, 1.5), oddScalar), description: oddValue, properties: oddValue },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(envelope, likely), (spec) => {
        expect(outcome(() => normaliseEnvelope(spec))).toBe(outcome(() => referenceEnvelope(spec)));
        if (isPlainObject(spec.properties) && !outcome(() => normaliseEnvelope(spec)).startsWith('SchemaError')) {
          expect(normaliseEnvelope(spec).properties).toBe(spec.properties);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
