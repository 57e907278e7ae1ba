/**
 * Copies of plain data on a decision's hot path. Both helpers give exactly what the language
 * construct they replace gives; they exist because that construct is slow where it sits.
 */

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * `{ ...base, ...additions }`. V8 11 (Node 20) takes a slow path when an object literal adds keys
 * after a spread, about 1 µs per added key: a decision's trace and `action.data` updates did that
 * several times. Object.assign onto a fresh object copies the same own enumerable keys in the same
 * order, except that it would set the prototype for an own `__proto__` key (of either), so that case keeps the spread.
 */
export function withKeys<A extends object>(base: unknown, additions: A): Record<string, unknown> & A {
  // nothing to keep: a spread with no key after it is V8's fast clone, a third of Object.assign's cost
  if (base === null || base === undefined) return { ...additions } as Record<string, unknown> & A;
  if (hasOwn.call(base, '__proto__') || hasOwn.call(additions, '__proto__')) {
    return { ...(base as object), ...additions } as Record<string, unknown> & A;
  }
  return Object.assign({}, base, additions) as Record<string, unknown> & A;
}

/**
 * `{ ...value }`, for a copy that keys are added to afterwards. V8 11 (Node 20) gives the spread copy
 * of a non-empty object a map of its own, outside the maps that objects of that shape share, so every
 * key added to the copy later takes the runtime's slow path (about 0.4 µs a key on the benchmark's
 * machine; a decision adds several to its `action.data` and `action.inputs`). Object.assign onto a
 * fresh literal copies the same own enumerable keys, in the same order, onto the shared maps; an own
 * `__proto__` key (which Object.assign would take for the prototype) keeps the spread.
 */
export function copyToExtend(value: object | null | undefined): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (hasOwn.call(value, '__proto__')) return { ...value } as Record<string, unknown>;
  return Object.assign({}, value) as Record<string, unknown>;
}

function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * structuredClone(value), for the JSON-shaped values policies copy (resolved properties, schema
 * defaults): a walk is several times cheaper than serialising. Anything else (Date, Map, class
 * instances, sparse arrays, cycles) is handed to structuredClone itself.
 */
export function clonePlain<T>(value: T): T {
  const copied = tryClonePlain(value, 0);
  return copied === NOT_PLAIN ? structuredClone(value) : (copied as T);
}

const NOT_PLAIN = Symbol('not plain');
/** deeper than any spec; a cycle gets there and is left to structuredClone */
const MAX_DEPTH = 64;

function tryClonePlain(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth > MAX_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const v = tryClonePlain(value[i], depth + 1);
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out[i] = v;
    }
    // structuredClone keeps extra non-index keys of an array; a walk of indices would drop them
    return Object.keys(value).length === value.length ? out : NOT_PLAIN;
  }
  if (!isPlainRecord(value)) return NOT_PLAIN;
  // structuredClone gives an ordinary object even for a null-prototype one, and copies string keys
  // only, so a symbol key is left out here too (asking for them was a runtime call per object)
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // structuredClone's own handling of this key is peculiar; leave it to structuredClone
    if (key === '__proto__') return NOT_PLAIN;
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (!('value' in descriptor)) return NOT_PLAIN;
    const v = tryClonePlain(descriptor.value, depth + 1);
    if (v === NOT_PLAIN) return NOT_PLAIN;
    out[key] = v;
  }
  return out;
}

/**
 * `Object.keys(record).sort()`. Own keys are distinct strings, so an insertion sort by code units
 * gives the very order the default sort gives; a few zone names sorted by the builtin cost four
 * times as much (its setup), on every scale-in's victim selection.
 */
export function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i;
    while (j > 0 && keys[j - 1] > key) {
      keys[j] = keys[j - 1];
      j--;
    }
    keys[j] = key;
  }
  return keys;
}
