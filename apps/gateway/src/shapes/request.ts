import type { SchemaObject } from '@nestjs/swagger';
import { badRequest } from '@trellis/common';
import type { ApiVersion } from '../core/api-version';
import {
  INT4_MAX,
  INT4_MIN,
  checkKeys,
  checkName,
  enumValue,
  envelope,
  intValue,
  isMap,
  mapValue,
  numberValue,
  stringValue,
  toBool,
  type IntOptions,
  type Json,
} from '../shared/body';
import { described, registerComponent, type NamedShape, type Schema } from './components';

/*
 * Request bodies as tables. Each field names its OpenAPI schema and the Senlin check that reads it,
 * so what the document says a body holds and what the gateway accepts are one declaration. Reading
 * keeps Senlin's order and messages (shared/body.ts): the envelope, then the keys (an unexpected one
 * first, then a missing required one), then each field in table order.
 */

export interface ReadContext {
  /** the request's microversion: a field `since` a later one is an unexpected key */
  version?: ApiVersion;
  /** max_nodes_per_cluster, the upper bound of the capacity fields that name it */
  maxNodesPerCluster?: number;
}

type Reader<T> = (value: unknown, key: string, ctx: ReadContext) => T;

interface FieldOptions<T> {
  required: boolean;
  since?: string;
  /** what an absent or null value reads as (also the documented default) */
  fallback?: T;
  /** the check that refuses an absent or null value in its own words (a field Senlin does not list as required) */
  refuseAbsent?: Reader<T>;
  /** a required key holding null; by default the reader judges the null */
  whenNull?: (key: string) => never;
}

/** One field of a request body: `Out` is what reading it gives (null when absent, unless required or defaulted). */
export class Field<T, Out = T | null> {
  constructor(
    readonly schema: Schema,
    private readonly reader: Reader<T>,
    private readonly options: FieldOptions<T> = { required: false },
  ) {}

  /** Listed among the keys that must be present (Senlin's `'x' is a required property`). */
  required(): Field<T, T> {
    return new Field(this.schema, this.reader, { ...this.options, required: true });
  }

  /** Known from that microversion on; an unexpected key before it. */
  since(version: string): Field<T, Out> {
    return new Field(this.schema, this.reader, { ...this.options, since: version });
  }

  /** Absent or null reads as this value, which the document shows as the default. */
  orElse(value: T): Field<T, T> {
    return new Field({ ...this.schema, default: value }, this.reader, { ...this.options, fallback: value });
  }

  /**
   * Needed, but not among Senlin's required keys: an absent or null value is refused by this check,
   * with its own message. The document lists the field as required.
   */
  requiredAs(refuse: Reader<T>): Field<T, T> {
    return new Field(this.schema, this.reader, { ...this.options, refuseAbsent: refuse });
  }

  /** Among the keys Senlin's key check requires. */
  get isRequired(): boolean {
    return this.options.required;
  }

  /** A valid body holds it. */
  get isNeeded(): boolean {
    return this.options.required || this.options.refuseAbsent !== undefined;
  }

  allowedAt(version: ApiVersion | undefined): boolean {
    return this.options.since === undefined || version === undefined || version.atLeast(this.options.since);
  }

  /** `partial`: check what is there, require nothing (a receiver's params, which a trigger completes). */
  read(obj: Json, key: string, ctx: ReadContext, partial = false): Out {
    const value = obj[key];
    if (value !== undefined && value !== null) return this.reader(value, key, ctx) as unknown as Out;
    const { required, fallback, refuseAbsent, whenNull } = this.options;
    if (!partial && required && value === null) return (whenNull ? whenNull(key) : this.reader(value, key, ctx)) as unknown as Out;
    if (fallback !== undefined) return fallback as unknown as Out;
    if (!partial && refuseAbsent) return refuseAbsent(value, key, ctx) as unknown as Out;
    return null as Out;
  }
}

/** A field with its own schema and check. */
export const field = <T>(schema: Schema, read: Reader<T>, whenNull?: (key: string) => never) =>
  new Field<T>(schema, read, { required: false, whenNull });

const requiredProperty = (key: string): never => {
  throw badRequest(`'${key}' is a required property`);
};

const NAME_SCHEMA: SchemaObject = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z\\u4e00-\\u9fa5\\d\\.\\_\\~-]*$' };

/** Senlin's NameField. */
export const name = (doc: SchemaObject = {}) => field<string>({ ...NAME_SCHEMA, ...doc }, (v, key) => checkName(v, key));

/** A string (a number is taken as its text) of at most `maxLength` characters. */
export const text = (doc: SchemaObject = {}, maxLength = 255) =>
  field<string>({ type: 'string', maxLength, ...doc }, (v, key) => stringValue(v, key, maxLength), requiredProperty);

export interface IntegerBounds extends Omit<IntOptions, 'max'> {
  /** a number, or max_nodes_per_cluster from the read context */
  max?: number | 'maxNodesPerCluster';
}

/**
 * An integer, also as a numeric string (`"count": "1"`, as the CLI sends it), within its bounds and
 * always within the int4 range of the column that stores it.
 */
export function integer(bounds: IntegerBounds = {}, doc: SchemaObject = {}) {
  const documentedMax = typeof bounds.max === 'number' ? Math.min(bounds.max, INT4_MAX) : INT4_MAX;
  const schema: SchemaObject = {
    oneOf: [
      { type: 'integer', minimum: Math.max(bounds.min ?? INT4_MIN, INT4_MIN), maximum: documentedMax },
      { type: 'string', pattern: '^\\s*[-+]?\\d+\\s*$', description: 'The same integer, as text.' },
    ],
    ...doc,
  };
  if (bounds.max === 'maxNodesPerCluster') {
    schema.description = [doc.description, 'At most max_nodes_per_cluster (1000 by default).'].filter(Boolean).join(' ');
  }
  return field<number>(schema, (v, key, ctx) =>
    intValue(v, key, { ...bounds, max: bounds.max === 'maxNodesPerCluster' ? ctx.maxNodesPerCluster : bounds.max }),
  );
}

/** Senlin's FloatField, held to the int4 range (it counts nodes). */
export const decimal = (doc: SchemaObject = {}) =>
  field<number>(
    {
      oneOf: [
        { type: 'number', minimum: INT4_MIN, maximum: INT4_MAX },
        { type: 'string', pattern: '^\\s*[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?\\s*$', description: 'The same number, as text.' },
      ],
      ...doc,
    },
    (v, key) => numberValue(v, key),
  );

/** A boolean; oslo's words (`"yes"`, `"0"`, ...) are read as booleans too. */
export const flag = (doc: SchemaObject = {}) => field<boolean>({ type: 'boolean', ...doc }, (v) => toBool(v));

export const FREE_MAP: SchemaObject = { type: 'object', additionalProperties: true };

/** A free-form map. */
export const freeMap = (doc: SchemaObject = {}) => field<Json>({ ...FREE_MAP, ...doc }, (v, key) => mapValue(v, key));

/** One of these strings. */
export const choice = <T extends string>(values: readonly T[], doc: SchemaObject = {}) =>
  field<T>({ type: 'string', enum: [...values], ...doc }, (v, key) => enumValue(v, key, values));

/** Taken as it is here; judged by the code that uses it (a spec by its type, for one), which the description says. */
export const given = <T = unknown>(schema: Schema) => field<T>(schema, (v) => v as T);

export type Fields = Record<string, Field<unknown, unknown>>;
export type Parsed<F extends Fields> = { [K in keyof F]: F[K] extends Field<unknown, infer Out> ? Out : never };

export interface ObjectOptions {
  description?: string;
  /** keys the table does not name are left to the service to judge instead of refused */
  openKeys?: boolean;
}

/** A JSON object read field by field. */
export class ObjectBody<F extends Fields> implements NamedShape {
  readonly ref;

  constructor(
    readonly name: string,
    readonly fields: F,
    private readonly options: ObjectOptions = {},
  ) {
    this.ref = registerComponent(name, this.schema());
  }

  get keys(): string[] {
    return Object.keys(this.fields);
  }

  /** Senlin's key checks: an unexpected key (at this microversion), then a missing required one. */
  checkKeys(obj: Json, ctx: ReadContext = {}): void {
    if (this.options.openKeys) return;
    const entries = Object.entries(this.fields);
    checkKeys(
      obj,
      entries.filter(([, f]) => f.allowedAt(ctx.version)).map(([k]) => k),
      entries.filter(([, f]) => f.isRequired).map(([k]) => k),
    );
  }

  /** Every field in table order. */
  read(obj: Json, ctx: ReadContext = {}): Parsed<F> {
    const out: Record<string, unknown> = {};
    for (const [key, f] of Object.entries(this.fields)) out[key] = f.read(obj, key, ctx);
    return out as Parsed<F>;
  }

  parse(obj: Json, ctx: ReadContext = {}): Parsed<F> {
    this.checkKeys(obj, ctx);
    return this.read(obj, ctx);
  }

  /** The values present, checked as a request would check them, with nothing required. */
  checkValues(obj: Json): void {
    for (const [key, f] of Object.entries(this.fields)) f.read(obj, key, {}, true);
  }

  private schema(): SchemaObject {
    const required = this.keys.filter((k) => this.fields[k].isNeeded);
    return {
      type: 'object',
      ...(this.options.description === undefined ? {} : { description: this.options.description }),
      properties: Object.fromEntries(Object.entries(this.fields).map(([k, f]) => [k, f.schema])),
      ...(required.length ? { required } : {}),
      ...(this.options.openKeys ? {} : { additionalProperties: false }),
    };
  }
}

export interface EnvelopeOptions extends ObjectOptions {
  /** the message when the body has no such key (Senlin's update handlers word it their own way) */
  missing?: string;
  /** the message when its value is not a map */
  notMap?: string;
}

/**
 * `{"cluster": {...}}`: the document names the envelope `<name>Request` and the inner object
 * `<name>Fields`.
 */
export class EnvelopedBody<F extends Fields> implements NamedShape {
  readonly name: string;
  readonly ref;
  readonly inner: ObjectBody<F>;

  constructor(
    readonly key: string,
    name: string,
    fields: F,
    private readonly options: EnvelopeOptions = {},
  ) {
    this.inner = new ObjectBody(`${name}Fields`, fields, { openKeys: options.openKeys });
    this.name = `${name}Request`;
    this.ref = registerComponent(this.name, {
      type: 'object',
      properties: { [key]: described(this.inner.ref, options.description) },
      required: [key],
    });
  }

  /** The envelope and the keys; `read` the fields when the service is ready for their checks. */
  open(body: unknown, ctx: ReadContext = {}): Json {
    const inner = envelope(body, this.key, this.options.missing, this.options.notMap);
    this.inner.checkKeys(inner, ctx);
    return inner;
  }

  read(inner: Json, ctx: ReadContext = {}): Parsed<F> {
    return this.inner.read(inner, ctx);
  }

  parse(body: unknown, ctx: ReadContext = {}): Parsed<F> {
    return this.read(this.open(body, ctx), ctx);
  }
}

export interface SoleKeyMessages {
  none: string;
  many: string;
  /** the error type of these messages (Senlin's HTTPBadRequest for some handlers) */
  type?: string;
}

/** The one key of a body that must hold exactly one (an action, an operation). */
export function soleKey(body: unknown, messages: SoleKeyMessages): [string, Json] {
  const map = isMap(body) ? body : {};
  const keys = Object.keys(map);
  if (keys.length === 0) throw badRequest(messages.none, messages.type);
  if (keys.length > 1) throw badRequest(messages.many, messages.type);
  return [keys[0], map];
}

export interface OneKeyMessages extends SoleKeyMessages {
  unknown: (key: string) => string;
  notMap: string;
}

/**
 * A body of exactly one of these keys, whose value is that member's map (null is an empty map):
 * `{"scale_out": {"count": 1}}`. The member's own fields are read by the service, in its order.
 */
export class OneKeyBody<M extends Record<string, NamedShape>> implements NamedShape {
  readonly ref;

  constructor(
    readonly name: string,
    readonly members: M,
    private readonly messages: OneKeyMessages,
    descriptions: Partial<Record<keyof M, string>> = {},
  ) {
    this.ref = registerComponent(name, {
      type: 'object',
      properties: Object.fromEntries(Object.entries(members).map(([k, m]) => [k, described(m.ref, descriptions[k])])),
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    });
  }

  get keys(): Array<keyof M & string> {
    return Object.keys(this.members);
  }

  pick(body: unknown): [keyof M & string, Json] {
    const { type } = this.messages;
    const [key, map] = soleKey(body, this.messages);
    if (!(key in this.members)) throw badRequest(this.messages.unknown(key), type);
    const data = map[key] ?? {};
    if (!isMap(data)) throw badRequest(this.messages.notMap, type);
    return [key, data];
  }
}
