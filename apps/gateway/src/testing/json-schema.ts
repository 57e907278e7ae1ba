import fc from 'fast-check';

/*
 * Just enough of OpenAPI's schema language to test the gateway's document against the code: whether
 * a value conforms to a schema, and values that do (fast-check arbitraries). It knows the keywords
 * the shapes in shapes/ emit and refuses any other, so a new keyword cannot be silently ignored.
 */

export interface JsonSchema {
  $ref?: string;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  type?: string;
  enum?: unknown[];
  nullable?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minProperties?: number;
  maxProperties?: number;
}

export type Components = Record<string, JsonSchema>;

const KNOWN = new Set([
  ...['$ref', 'allOf', 'oneOf', 'type', 'enum', 'nullable', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum'],
  ...['items', 'minItems', 'maxItems', 'uniqueItems', 'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties'],
  ...['description', 'example', 'default', 'format'],
]);

export function resolve(schema: JsonSchema, components: Components): JsonSchema {
  const unknown = Object.keys(schema).filter((k) => !KNOWN.has(k));
  if (unknown.length) throw new Error(`schema keywords this helper does not know: ${unknown.join(', ')}`);
  if (schema.$ref) {
    const found = components[schema.$ref.replace('#/components/schemas/', '')];
    if (!found) throw new Error(`dangling reference ${schema.$ref}`);
    return resolve(found, components);
  }
  if (schema.allOf?.length === 1) return resolve(schema.allOf[0], components);
  if (schema.allOf) throw new Error('allOf of more than one schema');
  return schema;
}

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

/** Where `value` breaks `schema`: one line per violation, each naming its path; [] when it conforms. */
export function violations(schema: JsonSchema, value: unknown, components: Components, path = '$'): string[] {
  const s = resolve(schema, components);
  if (value === null) return s.nullable || (s.type === undefined && !s.oneOf) ? [] : [`${path}: null`];
  if (s.oneOf) {
    const matching = s.oneOf.filter((branch) => violations(branch, value, components, path).length === 0);
    return matching.length === 1 ? [] : [`${path}: matches ${matching.length} of ${s.oneOf.length} oneOf branches`];
  }
  const out: string[] = [];
  const type = typeOf(value);
  if (s.type && s.type !== type && !(s.type === 'number' && type === 'integer')) return [`${path}: ${type}, not ${s.type}`];
  if (s.enum && !s.enum.includes(value)) out.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'string') {
    if (s.pattern && !new RegExp(s.pattern).test(value)) out.push(`${path}: does not match ${s.pattern}`);
    if (s.minLength !== undefined && value.length < s.minLength) out.push(`${path}: shorter than ${s.minLength}`);
    if (s.maxLength !== undefined && value.length > s.maxLength) out.push(`${path}: longer than ${s.maxLength}`);
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) out.push(`${path}: below ${s.minimum}`);
    if (s.maximum !== undefined && value > s.maximum) out.push(`${path}: above ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) out.push(`${path}: fewer than ${s.minItems} items`);
    if (s.maxItems !== undefined && value.length > s.maxItems) out.push(`${path}: more than ${s.maxItems} items`);
    if (s.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) out.push(`${path}: items repeat`);
    if (s.items) value.forEach((item, i) => out.push(...violations(s.items!, item, components, `${path}[${i}]`)));
  }
  if (type === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    for (const k of s.required ?? []) if (!(k in obj)) out.push(`${path}: ${k} is missing`);
    if (s.minProperties !== undefined && keys.length < s.minProperties) out.push(`${path}: fewer than ${s.minProperties} keys`);
    if (s.maxProperties !== undefined && keys.length > s.maxProperties) out.push(`${path}: more than ${s.maxProperties} keys`);
    for (const k of keys) {
      const property = s.properties?.[k];
      if (property) out.push(...violations(property, obj[k], components, `${path}.${k}`));
      else if (s.additionalProperties === false) out.push(`${path}: ${k} is not allowed`);
      else if (typeof s.additionalProperties === 'object') out.push(...violations(s.additionalProperties, obj[k], components, `${path}.${k}`));
    }
  }
  return out;
}

const key = fc.string().filter((k) => k !== '__proto__');
const json = fc.jsonValue({ maxDepth: 2 }).filter((v) => !JSON.stringify(v)?.includes('"__proto__"'));

/**
 * Values that conform to `schema`. The text branch of a number (`oneOf: [integer, {pattern}]`, the
 * CLI's `"count": "3"`) is generated as the text of a number of the other branch, within its bounds.
 */
export function arbitrary(schema: JsonSchema, components: Components): fc.Arbitrary<unknown> {
  const s = resolve(schema, components);
  const plain = arbitraryOfType(s, components);
  return s.nullable ? fc.oneof(plain, fc.constant(null)) : plain;
}

function arbitraryOfType(s: JsonSchema, components: Components): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.oneOf) {
    const numeric = s.oneOf.map((b) => resolve(b, components)).find((b) => b.type === 'integer' || b.type === 'number');
    return fc.oneof(
      ...s.oneOf.map((branch) => {
        const b = resolve(branch, components);
        return b.type === 'string' && b.pattern && numeric ? arbitraryOfType(numeric, components).map(String) : arbitrary(b, components);
      }),
    );
  }
  switch (s.type) {
    case 'string':
      return (s.pattern ? fc.stringMatching(new RegExp(s.pattern)) : fc.string()).filter(
        (v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity),
      );
    case 'integer':
      return fc.integer({ min: s.minimum, max: s.maximum });
    case 'number':
      return fc.double({ min: s.minimum, max: s.maximum, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = s.items ? arbitrary(s.items, components) : json;
      const bounds = { minLength: s.minItems, maxLength: Math.min(s.maxItems ?? 5, 5) };
      return s.uniqueItems ? fc.uniqueArray(items, { ...bounds, selector: (v) => JSON.stringify(v) }) : fc.array(items, bounds);
    }
    case 'object':
      return objectArbitrary(s, components);
    case undefined:
      return json;
    default:
      throw new Error(`no arbitrary for type ${s.type}`);
  }
}

function objectArbitrary(s: JsonSchema, components: Components): fc.Arbitrary<unknown> {
  const properties = s.properties ?? {};
  if (s.maxProperties === 1 && s.additionalProperties === false) {
    // exactly one of the keys (an action, an operation)
    return fc.oneof(...Object.entries(properties).map(([k, p]) => arbitrary(p, components).map((v) => ({ [k]: v }))));
  }
  const known = fc.record(
    Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, arbitrary(p, components)])),
    { requiredKeys: s.required ?? [] },
  );
  const extra =
    s.additionalProperties === false
      ? fc.constant({})
      : fc.dictionary(
          key.filter((k) => !(k in properties)),
          typeof s.additionalProperties === 'object' ? arbitrary(s.additionalProperties, components) : json,
          { maxKeys: 3 },
        );
  return fc
    .tuple(known, extra)
    .map(([a, b]) => ({ ...b, ...a }))
    .filter((o) => {
      const n = Object.keys(o).length;
      return n >= (s.minProperties ?? 0) && n <= (s.maxProperties ?? Infinity);
    });
}
