import { JsonText } from './json-text';

/** Senlin serialised JSON with sorted keys; clients diffing responses rely on stable output. */
export function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value as object).sort()) sorted[k] = (value as Record<string, unknown>)[k];
  return sorted;
}

/**
 * What `JSON.stringify(value, sortKeys)` serialises, as a value `JSON.stringify(value)` serialises
 * the same: objects whose keys are out of order are copied with their keys sorted, everything else
 * (arrays of strings, objects already in order) is kept as it is. A replacer function sends every
 * value through V8's slow serializer and a copy of every object makes garbage: for a page of 100
 * clusters (10,000 node ids) they were most of the gateway's CPU, and for a list of 1,000 what
 * raised its peak memory (BENCHMARKS.md, big-clusters).
 */
export function sortedForJson(value: unknown, key = ''): unknown {
  return sorted(value, key, null);
}

/**
 * The text `JSON.stringify(value, sortKeys)` writes, where a JsonText inside `value` stands for
 * the value its text holds: the text is spliced in, never parsed.
 */
export function sortedJsonText(value: unknown): string | undefined {
  const body = sortedJsonBody(value);
  return typeof body === 'string' || body === undefined ? body : body.toString('utf8');
}

/**
 * sortedJsonText's text as a response sends it. Without a JsonText it is
 * `JSON.stringify(sortedForJson(value))`. With one, only the objects and arrays that lead to it are
 * written here (everything beside them still by `JSON.stringify`), in pieces that go straight into
 * the UTF-8 bytes: an answer of 1,000 clusters is never also held as one 4.5 MB string.
 */
export function sortedJsonBody(value: unknown): string | Buffer | undefined {
  const spine = new Set<object>();
  const out = sorted(value, '', spine);
  if (spine.size === 0 && !(out instanceof JsonText)) return JSON.stringify(out);
  const pieces = new Pieces();
  write(out, spine, pieces);
  return pieces.bytes();
}

/**
 * sortedForJson's walk. With `spine`, a JsonText is kept as it is (not turned into its value by
 * its toJSON) and every object or array of the result that holds one, at any depth, is added to
 * `spine`.
 */
function sorted(value: unknown, key: string, spine: Set<object> | null): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (spine !== null && value instanceof JsonText) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return sorted(toJSON.call(value, key), key, spine);
  let holdsText = false;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      // most items of a big answer are strings (node ids): no call for them
      if (item === null || typeof item !== 'object') continue;
      const out = sorted(item, String(i), spine);
      if (out !== item) (copy ??= value.slice())[i] = out;
      if (spine !== null && leadsToText(out, spine)) holdsText = true;
    }
    const result = copy ?? value;
    if (holdsText) spine!.add(result);
    return result;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = keys[i - 1] < keys[i];
  let copy: Record<string, unknown> | null = null;
  if (!inOrder) {
    keys.sort();
    copy = {};
    for (const k of keys) copy[k] = object[k];
  }
  for (const k of keys) {
    const item = object[k];
    if (item === null || typeof item !== 'object') continue;
    const out = sorted(item, k, spine);
    if (out !== item) (copy ??= { ...object })[k] = out;
    if (spine !== null && leadsToText(out, spine)) holdsText = true;
  }
  const result = copy ?? object;
  if (holdsText) spine!.add(result);
  return result;
}

function leadsToText(out: unknown, spine: Set<object>): boolean {
  return typeof out === 'object' && out !== null && (out instanceof JsonText || spine.has(out));
}

/** JSON text in pieces: what is written between the JsonTexts, and their texts as they are. */
class Pieces {
  private readonly list: string[] = [];
  /** what is written since the last JsonText */
  text = '';

  splice(text: string): void {
    if (this.text !== '') this.list.push(this.text);
    this.list.push(text);
    this.text = '';
  }

  bytes(): Buffer {
    if (this.text !== '') this.list.push(this.text);
    let length = 0;
    for (const piece of this.list) length += Buffer.byteLength(piece, 'utf8');
    const bytes = Buffer.allocUnsafe(length);
    let at = 0;
    for (const piece of this.list) at += bytes.write(piece, at, 'utf8');
    return bytes;
  }
}

/**
 * `JSON.stringify` of sorted()'s result into `out`, a JsonText as its text: the objects and arrays
 * on `spine` are written here (in their own key order, which sorted() made the sorted one), the
 * rest by `JSON.stringify` itself. sorted() has already called every toJSON but the JsonTexts', so
 * what `JSON.stringify` leaves out (undefined, functions, symbols) is known before a key is written.
 */
function write(value: unknown, spine: Set<object>, out: Pieces): void {
  if (value instanceof JsonText) {
    out.splice(value.text);
  } else if (value === null || typeof value !== 'object' || !spine.has(value)) {
    out.text += JSON.stringify(value) ?? 'null';
  } else if (Array.isArray(value)) {
    out.text += '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.text += ',';
      write(value[i], spine, out);
    }
    out.text += ']';
  } else {
    out.text += '{';
    let first = true;
    for (const k of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[k];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out.text += (first ? '' : ',') + JSON.stringify(k) + ':';
      first = false;
      write(item, spine, out);
    }
    out.text += '}';
  }
}

/** A response body as the wire sees it: JSON values only, keys sorted (what `res.json` sends). */
export function toWireJson(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(sortedForJson(value)) ?? 'null');
}
