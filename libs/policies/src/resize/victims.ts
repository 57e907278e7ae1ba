import { NodeSnapshot } from '../framework/types';
import { RandomSource, randrange } from '../framework/random';

/** Victim selection (senlin-behaviour §3.5); results are node ids. */

/**
 * Bad nodes (ERROR, WARNING or tainted, then never created) in list order, and the good ones: `nodes`
 * itself when every node is good (a summarised cluster lists its victims and seldom a bad node; the
 * copy of every listed node was most of this function's cost).
 */
export function filterErrorNodes(nodes: readonly NodeSnapshot[]): { bad: string[]; good: readonly NodeSnapshot[] } {
  const bad: string[] = [];
  let notCreated: string[] | null = null;
  let good: NodeSnapshot[] | null = null;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.status === 'ERROR' || n.status === 'WARNING' || n.tainted === true) bad.push(n.id);
    else if (n.created_at === null || n.created_at === undefined) (notCreated ??= []).push(n.id);
    else {
      if (good !== null) good.push(n);
      continue;
    }
    // the first bad node: the good ones so far are the nodes before it
    good ??= nodes.slice(0, i);
  }
  if (notCreated !== null) for (let i = 0; i < notCreated.length; i++) bad.push(notCreated[i]);
  return { bad, good: good ?? nodes };
}

/**
 * Unlike Senlin (which crashed), asking for more nodes than there are returns all of them: the caller
 * sees a shorter list.
 */
export function nodesByRandom(nodes: readonly NodeSnapshot[], count: number, random: RandomSource): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  const selected = bad;
  const candidates = [...good];
  for (let i = count - bad.length; i > 0 && candidates.length > 0; i--) {
    const pick = randrange(random, candidates.length);
    selected.push(candidates[pick].id);
    candidates.splice(pick, 1);
  }
  return selected;
}

/**
 * Each zone's victims, zone after zone, as one list. `pick` returns a zone's victims as a fresh
 * array (it becomes the start of the result when it is the first: one copy fewer), or null for a
 * zone that gives none.
 */
export function victimsOverZones(zones: readonly string[], pick: (zone: string) => string[] | null): string[] {
  let victims: string[] | null = null;
  for (let j = 0; j < zones.length; j++) {
    const picked = pick(zones[j]);
    if (picked === null) continue;
    if (victims === null) victims = picked;
    else for (let i = 0; i < picked.length; i++) victims.push(picked[i]);
  }
  return victims ?? [];
}

const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    n = n * 10 + c;
  }
  return n;
};

/** Howard Hinnant's days_from_civil: exact proleptic Gregorian arithmetic, as Date.UTC does. */
function epochMillis(y: number, m: number, d: number, h: number, mi: number, sec: number, ms: number): number {
  if (!(m >= 1 && m <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && sec <= 59)) return NaN;
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  const days = era * 146097 + doe - 719468;
  return ((days * 24 + h) * 60 + mi) * 60000 + sec * 1000 + ms;
}

/** Two digits at i, or NaN. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` exactly (what toISOString and the snapshot loader write), read in one
 * go; NaN for anything else, including an impossible field, which then takes the general path. Every
 * string this accepts the general path would read the same way, to the same value.
 */
function isoMillis(v: string): number {
  if (v.length !== 24 || v.charCodeAt(23) !== 90 || v.charCodeAt(19) !== 46 || v.charCodeAt(10) !== 84 || v.charCodeAt(4) !== 45) return NaN;
  const lastMs = v.charCodeAt(22) - 48;
  if (!(lastMs >= 0 && lastMs <= 9)) return NaN;
  const ms = twoDigits(v, 20) * 10 + lastMs;
  return epochMillis(
    twoDigits(v, 0) * 100 + twoDigits(v, 2),
    twoDigits(v, 5),
    twoDigits(v, 8),
    twoDigits(v, 11),
    twoDigits(v, 14),
    twoDigits(v, 17),
    ms,
  );
}

/**
 * Date.parse(v), exactly, with the canonical form (`YYYY-MM-DDTHH:MM:SS.sssZ`, every separator in
 * place) read digit by digit: the decision's `now` and a scaling policy's `last_op` are parsed on
 * every decision.
 */
export function parseTimestamp(v: string): number {
  if (v.length === 24 && v.charCodeAt(7) === 45 && v.charCodeAt(13) === 58 && v.charCodeAt(16) === 58) {
    const t = isoMillis(v);
    if (!Number.isNaN(t)) return t;
  }
  return Date.parse(v);
}

/**
 * Epoch milliseconds of a timestamp. The canonical UTC form (`2024-01-01T00:00:00[.sss]Z`, what the
 * database and toISOString write) is read digit by digit: Date.parse costs more than the rest of a
 * victim selection on a large cluster.
 */
export function timestampMillis(v: string | null | undefined): number {
  if (!v) return 0;
  const iso = isoMillis(v);
  if (!Number.isNaN(iso)) return iso;
  if (v.length >= 20 && v.charCodeAt(v.length - 1) === 90 && v.charCodeAt(10) === 84 && v.charCodeAt(4) === 45) {
    const ms = v.length >= 24 && v.charCodeAt(19) === 46 ? digits(v, 20, 23) : v.length === 20 ? 0 : NaN;
    const t = epochMillis(digits(v, 0, 4), digits(v, 5, 7), digits(v, 8, 10), digits(v, 11, 13), digits(v, 14, 16), digits(v, 17, 19), ms);
    if (!Number.isNaN(t)) return t;
  }
  const t = Date.parse(v);
  return Number.isNaN(t) ? 0 : t;
}

const time = timestampMillis;

/**
 * Appends to `out` the ids of the `wanted` first nodes of `nodes` ordered by key (ascending, or
 * descending when `last`), ties by list position (reversed with `last`): the same result as a stable
 * sort read from either end. Appended, not returned: the caller's list (the bad nodes) is the result.
 */
function pick(nodes: readonly NodeSnapshot[], key: (n: NodeSnapshot) => number, wanted: number, last: boolean, out: string[]): void {
  const n = Math.min(wanted, nodes.length);
  if (n <= 0) return;
  if (n === 1) {
    // one victim (a scale-in by 1 takes one per zone at most): a scan, without the typed arrays
    let best = 0;
    let bestKey = key(nodes[0]);
    for (let i = 1; i < nodes.length && !Number.isNaN(bestKey); i++) {
      const k = key(nodes[i]);
      if (Number.isNaN(k)) bestKey = k;
      else if (last ? k >= bestKey : k < bestKey) {
        best = i;
        bestKey = k;
      }
    }
    if (!Number.isNaN(bestKey)) {
      out.push(nodes[best].id);
      return;
    }
  }
  const keys = new Float64Array(nodes.length);
  let min = Infinity;
  let max = -Infinity;
  let integral = true;
  for (let i = 0; i < nodes.length; i++) {
    const k = key(nodes[i]);
    keys[i] = k;
    if (k < min) min = k;
    if (k > max) max = k;
    if (!Number.isInteger(k)) integral = false;
  }
  // a few nodes (a zone's share of a small cluster) are placed one by one: packing costs more
  const order = integral && nodes.length > 32 ? pickPacked(keys, min, max, n, last) : null;
  const chosen = order ?? pickCompared(keys, n, last);
  for (let i = 0; i < chosen.length; i++) out.push(nodes[chosen[i]].id);
}

/**
 * Key and position packed into one exact double, `(key - min) * 2^bits + position`, so that the
 * order is plain numeric order and a partial selection needs no comparator: a bounded heap for a
 * few of many, a native sort otherwise. Null when the keys span too much to pack exactly.
 */
function pickPacked(keys: Float64Array, min: number, max: number, n: number, last: boolean): number[] | null {
  const count = keys.length;
  let bits = 0;
  while (2 ** bits < count) bits++;
  const scale = 2 ** bits;
  if ((max - min + 1) * scale > Number.MAX_SAFE_INTEGER) return null;
  // descending order is ascending order of the negated values, ties included
  const sign = last ? -1 : 1;
  const packed = new Float64Array(count);
  for (let i = 0; i < count; i++) packed[i] = sign * ((keys[i] - min) * scale + i);
  const chosen = smallest(packed, n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = (sign * chosen[i]) % scale;
  return order;
}

/** The n smallest values, ascending (n ≤ values.length; values distinct). */
function smallest(values: Float64Array, n: number): Float64Array {
  if (n * 4 >= values.length) return values.sort().subarray(0, n);
  // max-heap of the n smallest seen so far
  const heap = values.slice(0, n);
  for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(heap, i, n);
  for (let i = n; i < values.length; i++) {
    if (values[i] < heap[0]) {
      heap[0] = values[i];
      siftDown(heap, 0, n);
    }
  }
  return heap.sort();
}

function siftDown(heap: Float64Array, at: number, size: number): void {
  const v = heap[at];
  for (;;) {
    let child = 2 * at + 1;
    if (child >= size) break;
    if (child + 1 < size && heap[child + 1] > heap[child]) child++;
    if (heap[child] <= v) break;
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = v;
}

/** Keys that cannot be packed: a comparator on key then position. */
function pickCompared(keys: Float64Array, n: number, last: boolean): number[] {
  // before(a, b): a comes first in the wanted order
  const before = last ? (a: number, b: number) => keys[a] > keys[b] || (keys[a] === keys[b] && a > b) : (a: number, b: number) => keys[a] < keys[b] || (keys[a] === keys[b] && a < b);
  if (n > 16) {
    const all = Array.from(keys, (_, i) => i).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    return all.slice(0, n);
  }
  const order = new Array<number>(n);
  let size = 0;
  for (let i = 0; i < keys.length; i++) {
    if (size === n && !before(i, order[n - 1])) continue;
    let at = size === n ? n - 1 : size;
    while (at > 0 && before(i, order[at - 1])) {
      order[at] = order[at - 1];
      at--;
    }
    order[at] = i;
    if (size < n) size++;
  }
  return order;
}

/** Bad nodes first, then good nodes by created_at: oldest first or youngest first. */
export function nodesByAge(nodes: readonly NodeSnapshot[], count: number, oldFirst: boolean): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  pick(good, (n) => time(n.created_at), count - bad.length, !oldFirst, bad);
  return bad;
}

/** Bad nodes first, then good nodes whose profile is oldest. */
export function nodesByProfileAge(nodes: readonly NodeSnapshot[], count: number): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  pick(good, (n) => time(n.profile_created_at), count - bad.length, false, bad);
  return bad;
}

/** The zone a node is in: the one it recorded, else the one Nova reports for its server. */
export function nodeZone(node: NodeSnapshot): string | undefined {
  const recorded = node.data?.placement?.zone;
  if (typeof recorded === 'string') return recorded;
  const reported = node.server?.availability_zone;
  return typeof reported === 'string' ? reported : undefined;
}

/** The nodes of each given zone (by nodeZone), in cluster order; nodes of other zones are skipped. */
export function nodesInZones(nodes: readonly NodeSnapshot[], zones: readonly string[]): Map<string, NodeSnapshot[]> {
  const lists = zones.map((): NodeSnapshot[] => []);
  const k = zones.length;
  for (let i = 0; i < nodes.length; i++) {
    const zone = nodeZone(nodes[i]);
    if (zone === undefined) continue;
    for (let j = 0; j < k; j++) {
      if (zone === zones[j]) {
        lists[j].push(nodes[i]);
        break;
      }
    }
  }
  return new Map(zones.map((z, j) => [z, lists[j]]));
}
