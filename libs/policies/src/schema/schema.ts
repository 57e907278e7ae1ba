import { clonePlain } from '../framework/plain-data';
import { isPlainObject, pyStr } from './py-format';

/**
 * Senlin's spec schema (senlin/common/schema.py): typed items with defaults, `required`, nested
 * schemas and AllowedValues, resolved with Senlin's coercions and message texts. Unlike Senlin every
 * error carries the property path (decision 18), e.g. `properties.zones[1].weight`.
 */
export type SchemaTypeName = 'String' | 'Integer' | 'Number' | 'Boolean' | 'List' | 'Map';

export class SchemaError extends Error {
  constructor(
    /** where in the spec, e.g. `properties.zones[1].weight`; empty for the spec itself */
    readonly path: string,
    /** Senlin's text without the path */
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'SchemaError';
  }
}

export class AllowedValues {
  readonly type = 'AllowedValues';
  constructor(readonly values: readonly unknown[]) {}

  check(value: unknown, path: string): void {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (!this.values.includes(v)) {
        throw new SchemaError(path, `'${pyStr(value)}' must be one of the allowed values: ${this.values.map(pyStr).join(', ')}`);
      }
    }
  }

  render(): { type: string; constraint: unknown[] } {
    return { type: this.type, constraint: [...this.values] };
  }
}

export type Constraint = AllowedValues;

export interface SchemaItemOptions {
  description?: string;
  default?: unknown;
  required?: boolean;
  constraints?: Constraint[];
}

export type SchemaMap = Record<string, SchemaItem>;

export abstract class SchemaItem {
  abstract readonly type: SchemaTypeName;
  readonly description: string | undefined;
  readonly default: unknown;
  readonly required: boolean;
  readonly constraints: Constraint[];

  constructor(options: SchemaItemOptions = {}) {
    this.description = options.description;
    this.default = options.default ?? null;
    this.required = options.required ?? false;
    this.constraints = options.constraints ?? [];
  }

  hasDefault(): boolean {
    return this.default !== null;
  }

  /** Senlin's get_default: Map and List defaults are returned as declared, scalars are resolved. */
  getDefault(path: string): unknown {
    return this.resolve(this.default, path);
  }

  resolve(value: unknown, path: string): unknown {
    const converted = this.convert(value, path);
    for (const constraint of this.constraints) constraint.check(converted, path);
    return converted;
  }

  protected abstract convert(value: unknown, path: string): unknown;
}

export class StringItem extends SchemaItem {
  readonly type = 'String';
  protected convert(value: unknown, path: string): string {
    if (value === null || value === undefined) throw new SchemaError(path, "The value 'None' is not a valid string.");
    return pyStr(value);
  }
}

const INT_TEXT = /^\s*[+-]?\d+(_\d+)*\s*$/;
const FLOAT_TEXT = /^\s*[+-]?(\d+(_\d+)*(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)([eE][+-]?\d+)?\s*$/;

/** Python's int(): bools, numbers (truncated) and integer strings. */
export function pyInt(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value === 'string' && INT_TEXT.test(value)) return Number(value.replace(/_/g, '').trim());
  return undefined;
}

/** Python's `int(v)` falling back to `float(v)`, restricted to finite values (JSON cannot carry others). */
export function pyNumber(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') {
    if (INT_TEXT.test(value)) return Number(value.replace(/_/g, '').trim());
    if (FLOAT_TEXT.test(value)) {
      const n = Number(value.replace(/_/g, '').trim());
      return Number.isFinite(n) ? n : undefined;
    }
  }
  return undefined;
}

export class IntegerItem extends SchemaItem {
  readonly type = 'Integer';
  protected convert(value: unknown, path: string): number {
    const n = pyInt(value);
    if (n === undefined) throw new SchemaError(path, `The value '${pyStr(value)}' is not a valid Integer`);
    return n;
  }
}

export class NumberItem extends SchemaItem {
  readonly type = 'Number';
  protected convert(value: unknown, path: string): number {
    const n = pyNumber(value);
    if (n === undefined) throw new SchemaError(path, `The value '${pyStr(value)}' is not a valid number.`);
    return n;
  }
}

const TRUE_TEXT = new Set(['1', 't', 'true', 'y', 'yes', 'on']);
const FALSE_TEXT = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

export class BooleanItem extends SchemaItem {
  readonly type = 'Boolean';
  protected convert(value: unknown, path: string): boolean {
    if (typeof value === 'boolean') return value;
    const text = value === null || value === undefined ? 'None' : pyStr(value).toLowerCase();
    if (TRUE_TEXT.has(text)) return true;
    if (FALSE_TEXT.has(text)) return false;
    throw new SchemaError(path, `The value '${pyStr(value)}' is not a valid Boolean`);
  }
}

export class ListItem extends SchemaItem {
  readonly type = 'List';
  constructor(
    options: SchemaItemOptions & { schema?: SchemaItem },
    readonly schema: SchemaItem | undefined = options.schema,
  ) {
    super(options);
  }

  override getDefault(): unknown {
    return clonePlain(this.default);
  }

  protected convert(value: unknown, path: string): unknown[] {
    // Python treats a string as a sequence of characters; Senlin's List accepted one as such.
    const items = typeof value === 'string' ? [...value] : value;
    if (!Array.isArray(items)) throw new SchemaError(path, `'${pyStr(value)}' is not a List`);
    const schema = this.schema;
    if (!schema) return [...items];
    return items.map((item, i) => schema.resolve(item, `${path}[${i}]`));
  }
}

export class MapItem extends SchemaItem {
  readonly type = 'Map';
  constructor(
    options: SchemaItemOptions & { schema?: SchemaMap },
    readonly schema: SchemaMap | undefined = options.schema,
  ) {
    super(options);
  }

  override getDefault(): unknown {
    return clonePlain(this.default);
  }

  protected convert(value: unknown, path: string): Record<string, unknown> {
    let map = value;
    if (typeof map === 'string') {
      try {
        map = JSON.parse(map);
      } catch {
        // not JSON: reported below as not a Map, as Senlin did
      }
    }
    if (!isPlainObject(map)) throw new SchemaError(path, `'${pyStr(value)}' is not a Map`);
    if (!this.schema) return { ...map };
    return resolveSpec(this.schema, map, path);
  }
}

/**
 * Resolves a mapping against a schema map: every schema key is present in the result (value, else
 * default, else null), required keys must be given, unknown keys are refused (Senlin's Spec).
 */
export function resolveSpec(schema: SchemaMap, data: Record<string, unknown>, path: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) {
    const item = schema[key];
    const itemPath = path ? `${path}.${key}` : key;
    if (Object.prototype.hasOwnProperty.call(data, key)) {
      result[key] = item.resolve(data[key], itemPath);
    } else if (item.hasDefault()) {
      result[key] = item.getDefault(itemPath);
    } else if (item.required) {
      throw new SchemaError(itemPath, `Required spec item '${key}' not provided`);
    } else {
      result[key] = null;
    }
  }
  for (const key of Object.keys(data)) {
    if (!Object.prototype.hasOwnProperty.call(schema, key)) {
      throw new SchemaError(path ? `${path}.${key}` : key, `Unrecognizable spec item '${key}'`);
    }
  }
  return result;
}

/** Builders, named as Senlin's schema classes. */
export const Schema = {
  String: (options?: SchemaItemOptions) => new StringItem(options),
  Integer: (options?: SchemaItemOptions) => new IntegerItem(options),
  Number: (options?: SchemaItemOptions) => new NumberItem(options),
  Boolean: (options?: SchemaItemOptions) => new BooleanItem(options),
  List: (options: SchemaItemOptions & { schema?: SchemaItem }) => new ListItem(options),
  Map: (options: SchemaItemOptions & { schema?: SchemaMap }) => new MapItem(options),
};
