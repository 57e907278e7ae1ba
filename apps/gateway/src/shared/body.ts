import { badRequest } from '@trellis/common';

/**
 * Request-body checks with Senlin's messages (its versioned request objects were validated with
 * JSON schema, then coerced field by field). Every failure is a 400 naming the field.
 */

export type Json = Record<string, unknown>;

export const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Python's `'%s' % value` for the messages that quote a rejected value. */
export function show(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** `{"cluster": {...}}` → the inner object. */
export function envelope(
  body: unknown,
  key: string,
  missing = `Request body missing '${key}' key.`,
  notMap = `The data provided for '${key}' is not a map.`,
): Json {
  if (!isMap(body) || !(key in body)) throw badRequest(missing, 'HTTPBadRequest');
  const inner = body[key];
  if (!isMap(inner)) throw badRequest(notMap, 'HTTPBadRequest');
  return inner;
}

export function checkKeys(obj: Json, allowed: readonly string[], required: readonly string[] = []): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length === 1) throw badRequest(`Additional properties are not allowed ('${extra[0]}' was unexpected)`);
  if (extra.length > 1) {
    throw badRequest(`Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} were unexpected)`);
  }
  for (const k of required) {
    if (!(k in obj)) throw badRequest(`'${k}' is a required property`);
  }
}

/**
 * The range of PostgreSQL's `integer` (int4), the column type of every integer Trellis stores (sizes,
 * timeouts, priorities, indexes): a value outside it is a 400 naming the field, never a failed
 * INSERT or, worse, an accepted request whose action then fails and leaves its cluster locked.
 */
export const INT4_MIN = -2147483648;
export const INT4_MAX = 2147483647;

/** A number or a numeric string (`"3"`, as the CLI sends it) that is an integer, whatever its size. */
function parseInteger(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) return Number(value);
  throw badRequest(`The value for ${field} must be an integer: '${show(value)}'.`);
}

export interface IntOptions {
  /** defaults to INT4_MIN; a bound outside the int4 range is narrowed to it */
  min?: number;
  /** defaults to INT4_MAX; a bound outside the int4 range is narrowed to it */
  max?: number;
  /** capacity fields use "The value for the X field must be ..."; others "Value must be >= N for field 'X'." */
  capacity?: boolean;
}

/**
 * The one bounds check of integer (and integral-use number) fields, in Senlin's words: its
 * IntegerField's "Value must be >= N for field 'X'." or its CapacityField's "The value for the X
 * field must be greater than or equal to N.".
 */
function bounded(n: number, field: string, opts: IntOptions): number {
  const min = Math.max(opts.min ?? INT4_MIN, INT4_MIN);
  const max = Math.min(opts.max ?? INT4_MAX, INT4_MAX);
  if (n < min) {
    throw badRequest(
      opts.capacity
        ? `The value for the ${field} field must be greater than or equal to ${min}.`
        : `Value must be >= ${min} for field '${field}'.`,
    );
  }
  if (n > max) {
    throw badRequest(
      opts.capacity
        ? `The value for the ${field} field must be less than or equal to ${max}.`
        : `Value must be <= ${max} for field '${field}'.`,
    );
  }
  return n;
}

/** An integer (a number or a numeric string, as the CLI sends it) within its bounds, in Senlin's words. */
export function intValue(value: unknown, key: string, opts: IntOptions = {}): number {
  return bounded(parseInteger(value, key), key, opts);
}

/**
 * A number (Senlin's FloatField) that is used as a count of nodes, so it is held to the int4 range
 * as integer fields are.
 */
export function numberValue(v: unknown, key: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return bounded(v, key, {});
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return bounded(Number(v), key, {});
  throw badRequest(`The value for ${key} must be a number: '${show(v)}'.`);
}

const TRUE_WORDS = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE_WORDS = ['0', 'f', 'false', 'off', 'n', 'no'];
const ACCEPTABLE = [...TRUE_WORDS, ...FALSE_WORDS].sort().map((w) => `'${w}'`).join(', ');

/** oslo's strict bool_from_string. */
export function toBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const text = show(value).trim().toLowerCase();
  if (TRUE_WORDS.includes(text)) return true;
  if (FALSE_WORDS.includes(text)) return false;
  throw badRequest(`Unrecognized value '${show(value)}', acceptable values are: ${ACCEPTABLE}`);
}

/** A boolean query parameter (`dry_run`, `force`): oslo's words, with Senlin's parse_bool_param message. */
export function boolParam(value: unknown, name: string): boolean {
  try {
    return toBool(value);
  } catch {
    throw badRequest(`Invalid value '${show(value)}' specified for '${name}'`);
  }
}

export function enumValue<T extends string>(v: unknown, key: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw badRequest(`Value '${show(v)}' is not acceptable for field '${key}'.`);
  }
  return v as T;
}

export function stringValue(v: unknown, key: string, maxLength = 255): string {
  if (typeof v !== 'string' && typeof v !== 'number') throw badRequest(`The value for ${key} must be a string: '${show(v)}'.`);
  const s = String(v);
  if (s.length > maxLength) throw badRequest(`The value for ${key} must be at most ${maxLength} characters long.`);
  return s;
}

/**
 * oslo.versionedobjects' StringField, which Senlin's request objects use: text and numbers are taken
 * as text (a boolean too: Python's bool is an int), None is refused, a map or a list is refused by type.
 */
export function stringField(v: unknown, key: string): string {
  if (v === null || v === undefined) throw badRequest(`Field \`${key}' cannot be None`);
  if (typeof v === 'object') throw badRequest(`A string is required in field ${key}, not a ${Array.isArray(v) ? 'list' : 'dict'}`);
  return show(v);
}

export function mapValue(v: unknown, key: string): Json {
  if (!isMap(v)) throw badRequest(`The value for ${key} must be a map: '${show(v)}'.`);
  return v;
}

export function stringListValue(v: unknown, key: string, minItems = 0): string[] {
  if (!Array.isArray(v)) throw badRequest(`The value for ${key} must be a list: '${show(v)}'.`);
  if (v.length < minItems) throw badRequest(`Value for '${key}' must have at least ${minItems} item(s).`);
  return v.map((item) => {
    if (typeof item !== 'string' || item === '') throw badRequest(`Each item of ${key} must be a non-empty string: '${show(item)}'.`);
    return item;
  });
}

const NAME_CHARS = /^[a-zA-Z\u4e00-\u9fa5\d._~-]*$/;

/** Senlin's NameField: 1-255 characters of `[a-zA-Z0-9._~-]` or CJK. */
export function checkName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw badRequest(`The value for the '${field}' must be a string: '${show(value)}'.`);
  }
  const name = String(value);
  if (name.length < 1 || name.length > 255) {
    throw badRequest(`The value for the '${field}' (${name}) must be between 1 and 255 characters long.`);
  }
  if (!NAME_CHARS.test(name)) {
    throw badRequest(
      `The value for the '${field}' (${name}) contains illegal characters. It must contain only alphanumeric or "_-.~" characters and must start with letter.`,
    );
  }
  return name;
}

/** Python's repr of a list of strings, as Senlin's node-list messages print it. */
export const pyList = (items: string[]) => `[${items.map((i) => `'${i}'`).join(', ')}]`;
