import { Policy } from './policy';

/**
 * Built policies by policy id, for the decision's hot path (issue 15): every evaluate() builds every
 * attached policy from its spec, and resolving five specs was about a third of a decision on a small
 * cluster. A policy's spec does not change under its id in the engine, but evaluate() takes any
 * input (a dry run may send another spec under the same id), so a hit needs the same name and a spec
 * equal, key order included, to the one the policy was built from. Comparing is a walk without
 * allocation, several times cheaper than resolving.
 *
 * The cached policy is built from the cache's own copy of the spec, so a caller changing its input
 * afterwards cannot reach it. Only specs made of JSON values are cached (anything else is built
 * every time), and only built-in types, which keep no state of a decision on the instance (a
 * plugin's might).
 *
 * A spec digest skips the comparison: the engine's loader reads each policy's digest of its stored
 * spec with it (`spec_digest`: SHA-256 of the jsonb's text, which PostgreSQL writes the same for the
 * same value), so a policy the cache built under the same id, name and digest is the same policy.
 * Only a caller that vouches for its digests passes one (evaluate()'s `trustSpecDigests`; never the
 * REST evaluation endpoint's user input), and only an entry stored with a vouched-for digest is
 * found by one: an untrusted caller's entry keeps no digest and is only ever found by comparing.
 */
export class PolicyCache {
  private readonly byId = new Map<string, Entry>();
  /**
   * The same entries chained by a cheap bucket of the id (its length and end characters): the ids
   * a decision asks for come from a fresh snapshot and have never been hashed, and hashing five
   * UUIDs for a Map cost as much as comparing the specs.
   */
  private readonly buckets: Array<Entry | undefined> = new Array(BUCKETS);

  constructor(private readonly capacity = 1024) {}

  /**
   * The policy built for this id, name and spec, or undefined. `digest` is a vouched-for digest of
   * `spec` (see the class comment) or null: an entry stored with the same digest is a hit without
   * comparing the spec; otherwise the spec is compared, and a hit then keeps the digest for next time.
   */
  get(id: string, name: string | null, spec: unknown, digest: string | null = null): Policy | undefined {
    let entry = this.buckets[idBucket(id)];
    while (entry !== undefined && entry.id !== id) entry = entry.next;
    if (entry === undefined || entry.name !== name) return undefined;
    if (digest !== null && entry.digest === digest) return entry.policy;
    if (!sameJson(spec, entry.spec, 0)) return undefined;
    // the same spec: the digest the caller vouches for is this spec's (an entry stored without one, or
    // with another algorithm's, learns it)
    if (digest !== null) entry.digest = digest;
    return entry.policy;
  }

  /** The spec as the cache compares it, or null when it holds anything but JSON values (not cached). */
  static copy(spec: unknown): Copy | null {
    const copied = copyJson(spec, 0);
    return copied === NOT_JSON ? null : copied;
  }

  /** `digest`: a vouched-for digest of `spec`, or null (see get) */
  set(id: string, name: string | null, spec: Copy, policy: Policy, digest: string | null = null): void {
    // oldest first out: an engine with more policies than this rebuilds the rest, as before
    if (this.byId.size >= this.capacity && !this.byId.has(id)) this.remove(this.byId.keys().next().value as string);
    this.remove(id);
    const b = idBucket(id);
    const entry: Entry = { id, name, spec, digest, policy, next: this.buckets[b] };
    this.buckets[b] = entry;
    this.byId.set(id, entry);
  }

  private remove(id: string): void {
    if (!this.byId.delete(id)) return;
    const b = idBucket(id);
    let at = this.buckets[b];
    if (at?.id === id) {
      this.buckets[b] = at.next;
      return;
    }
    while (at?.next !== undefined && at.next.id !== id) at = at.next;
    if (at?.next !== undefined) at.next = at.next.next;
  }
}

interface Entry {
  id: string;
  name: string | null;
  spec: Copy;
  /** a vouched-for digest of spec, or null: only a caller with the same digest skips the comparison */
  digest: string | null;
  policy: Policy;
  /** the next entry of the same bucket */
  next: Entry | undefined;
}

const BUCKETS = 256;

function idBucket(id: string): number {
  const n = id.length;
  if (n < 2) return n === 0 ? 0 : id.charCodeAt(0) & (BUCKETS - 1);
  return (((id.charCodeAt(0) * 31 + id.charCodeAt(1)) * 31 + id.charCodeAt(n - 2)) * 31 + id.charCodeAt(n - 1) + n) & (BUCKETS - 1);
}

/**
 * A JSON value as the cache keeps it: one node shape for every kind, told apart by a small tag, so
 * the comparison of a hit (every decision compares all its specs) dispatches on an integer instead
 * of `typeof` and `instanceof` over mixed values. An object's keys are in an array beside its values.
 */
interface Copy {
  readonly kind: Kind;
  /** a primitive's value (LEAF, NUMBER) */
  readonly value: null | boolean | number | string;
  /** an object's own keys in order (MAP) */
  readonly keys: readonly string[] | null;
  /** a list's items or an object's values, in key order (LIST, MAP) */
  readonly items: readonly Copy[] | null;
}

/** null, a boolean or a string: compared with === */
const LEAF = 0;
/** compared with Object.is: -0 resolves apart from 0 (pyStr writes it '-0.0') */
const NUMBER = 1;
const LIST = 2;
const MAP = 3;
type Kind = typeof LEAF | typeof NUMBER | typeof LIST | typeof MAP;

const leaf = (value: null | boolean | string): Copy => ({ kind: LEAF, value, keys: null, items: null });

const NOT_JSON = Symbol('not JSON');
/** deeper than any spec; a cycle gets there */
const MAX_DEPTH = 32;

function plainPrototype(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The copy, or NOT_JSON (undefined, functions, class instances, accessors, holes, symbols, `__proto__`). */
function copyJson(value: unknown, depth: number): Copy | typeof NOT_JSON {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return leaf(value);
  if (typeof value === 'number') return Number.isFinite(value) ? { kind: NUMBER, value, keys: null, items: null } : NOT_JSON;
  if (typeof value !== 'object' || depth > MAX_DEPTH) return NOT_JSON;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.keys(value).length !== value.length) return NOT_JSON;
    const items: Copy[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = copyJson(value[i], depth + 1);
      if (v === NOT_JSON) return NOT_JSON;
      items[i] = v;
    }
    return { kind: LIST, value: null, keys: null, items };
  }
  if (!plainPrototype(value) || Object.getOwnPropertySymbols(value).length > 0) return NOT_JSON;
  const keys = Object.keys(value);
  const items: Copy[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] === '__proto__') return NOT_JSON;
    const descriptor = Object.getOwnPropertyDescriptor(value, keys[i]) as PropertyDescriptor;
    if (!('value' in descriptor)) return NOT_JSON;
    const v = copyJson(descriptor.value, depth + 1);
    if (v === NOT_JSON) return NOT_JSON;
    items[i] = v;
  }
  return { kind: MAP, value: null, keys, items };
}

/**
 * Whether `value` is equal to `copy`: the same primitives, arrays of the same length and elements,
 * objects of the same own enumerable keys in the same order. A value the copy could not have come
 * from (a class instance, a hole, an inherited enumerable key) is never equal.
 */
function sameJson(value: unknown, copy: Copy, depth: number): boolean {
  const kind = copy.kind;
  if (kind === LEAF) return value === copy.value;
  if (kind === NUMBER) return Object.is(value, copy.value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return false;
  const items = copy.items as readonly Copy[];
  if (kind === LIST) {
    if (!Array.isArray(value) || value.length !== items.length || Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < items.length; i++) if (!sameItem(value[i], items[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(value) || !plainPrototype(value)) return false;
  const keys = copy.keys as readonly string[];
  let i = 0;
  // for-in lists own keys first, in Object.keys order, then any inherited enumerable one (a mismatch)
  for (const key in value) {
    if (i === keys.length || key !== keys[i] || !sameItem((value as Record<string, unknown>)[key], items[i], depth + 1)) return false;
    i++;
  }
  return i === keys.length;
}

/**
 * sameJson, with a LEAF (most of a spec's values: strings, booleans, null) compared in place: the
 * call per leaf was most of a hit's comparison (counted by callgrind, Session 10).
 */
function sameItem(value: unknown, copy: Copy, depth: number): boolean {
  return copy.kind === LEAF ? value === copy.value : sameJson(value, copy, depth);
}
