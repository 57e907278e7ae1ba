import { clonePlain } from '../framework/plain-data';
import { isPlainObject, pyStr } from './py-format';
import {
  AllowedValues,
  BooleanItem,
  IntegerItem,
  ListItem,
  MapItem,
  NumberItem,
  SchemaItem,
  SchemaMap,
  StringItem,
  pyInt,
  pyNumber,
  resolveSpec,
} from './schema';

/**
 * A policy type's property schema compiled once into a resolver, for the decision's hot path: every
 * evaluate() resolves every attached spec, and the generic walk (resolveSpec) spent most of its time
 * building property paths (`properties.zones[1].weight`) that only an error message needs.
 *
 * The compiled resolver only answers the question "what does the spec resolve to" for specs that
 * resolve without error. Whenever it meets anything it does not handle, or any error, it hands the
 * whole spec to resolveSpec, which returns the same value or throws Senlin's error with its path.
 * So errors, their order and their texts come from one place; the compiled code never makes one.
 */
export type CompiledResolver = (data: Record<string, unknown>) => Record<string, unknown>;

/** A value the compiled code cannot produce: the generic walk decides. */
const SLOW = Symbol('slow path');
type Fast = (value: unknown) => unknown;

const hasOwn = Object.prototype.hasOwnProperty;

export function compileSchemaMap(schema: SchemaMap, path: string): CompiledResolver {
  const fast = compileMap(schema);
  const slow: CompiledResolver = (data) => resolveSpec(schema, data, path);
  if (!fast) return slow;
  return (data) => {
    let result: unknown;
    try {
      result = fast(data);
    } catch {
      // e.g. pyStr of a cyclic value: the generic walk throws the same error
      result = SLOW;
    }
    return result === SLOW ? slow(data) : (result as Record<string, unknown>);
  };
}

/** Null when the schema holds an item the compiler does not know (a subclass, another constraint). */
function compileMap(schema: SchemaMap): ((data: unknown) => unknown) | null {
  const keys = Object.keys(schema);
  const resolvers: Fast[] = [];
  const absent: Array<() => unknown> = [];
  for (const key of keys) {
    // resolveSpec assigns result[key]: a '__proto__' key would set the prototype; leave it to the walk
    if (key === '__proto__') return null;
    const item = schema[key];
    const resolve = compileItem(item);
    if (!resolve) return null;
    resolvers.push(resolve);
    absent.push(compileAbsent(item));
  }
  return (data) => {
    const map = data as Record<string, unknown>;
    const result: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const v = hasOwn.call(map, key) ? resolvers[i](map[key]) : absent[i]();
      if (v === SLOW) return SLOW;
      result[key] = v;
    }
    for (const key of Object.keys(map)) if (!hasOwn.call(schema, key)) return SLOW;
    return result;
  };
}

/** What resolveSpec puts for a key the spec leaves out: the default, null, or (required) an error. */
function compileAbsent(item: SchemaItem): () => unknown {
  if (item.hasDefault()) {
    // Map and List defaults are fresh copies each time; a scalar default resolves to a primitive
    if (item instanceof MapItem || item instanceof ListItem) return () => clonePlain(item.default);
    let value: unknown;
    try {
      value = item.getDefault('');
    } catch {
      return () => SLOW;
    }
    return () => value;
  }
  if (item.required) return () => SLOW;
  return () => null;
}

function compileItem(item: SchemaItem): Fast | null {
  const convert = compileConvert(item);
  if (!convert) return null;
  const allowed: Array<readonly unknown[]> = [];
  for (const c of item.constraints) {
    if (c.constructor !== AllowedValues) return null;
    allowed.push(c.values);
  }
  if (allowed.length === 0) return convert;
  return (value) => {
    const converted = convert(value);
    if (converted === SLOW) return SLOW;
    // AllowedValues.check: every element of a list, else the value itself
    const values = Array.isArray(converted) ? converted : [converted];
    for (const list of allowed) for (const v of values) if (!list.includes(v)) return SLOW;
    return converted;
  };
}

const TRUE_TEXT = new Set(['1', 't', 'true', 'y', 'yes', 'on']);
const FALSE_TEXT = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

/** Each item type's convert() for valid input, SLOW otherwise; only exact classes, not subclasses. */
function compileConvert(item: SchemaItem): Fast | null {
  switch (item.constructor) {
    case StringItem:
      return (v) => (v === null || v === undefined ? SLOW : pyStr(v));
    case IntegerItem:
      return (v) => pyInt(v) ?? SLOW;
    case NumberItem:
      return (v) => pyNumber(v) ?? SLOW;
    case BooleanItem:
      return (v) => {
        if (typeof v === 'boolean') return v;
        const text = v === null || v === undefined ? 'None' : pyStr(v).toLowerCase();
        return TRUE_TEXT.has(text) ? true : FALSE_TEXT.has(text) ? false : SLOW;
      };
    case ListItem: {
      const schema = (item as ListItem).schema;
      const element = schema ? compileItem(schema) : undefined;
      if (element === null) return null;
      return (v) => {
        const items = typeof v === 'string' ? [...v] : v;
        if (!Array.isArray(items)) return SLOW;
        if (!element) return [...items];
        const out = new Array<unknown>(items.length);
        for (let i = 0; i < items.length; i++) {
          // Array.prototype.map skips holes; the walk keeps them, so a sparse list is left to it
          if (!(i in items)) return SLOW;
          const r = element(items[i]);
          if (r === SLOW) return SLOW;
          out[i] = r;
        }
        return out;
      };
    }
    case MapItem: {
      const schema = (item as MapItem).schema;
      const map = schema ? compileMap(schema) : undefined;
      if (map === null) return null;
      return (v) => {
        let value = v;
        if (typeof value === 'string') {
          try {
            value = JSON.parse(value);
          } catch {
            return SLOW;
          }
        }
        if (!isPlainObject(value)) return SLOW;
        return map ? map(value) : { ...value };
      };
    }
    default:
      return null;
  }
}
