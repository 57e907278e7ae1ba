import { NodeSnapshot } from '../framework/types';
import { RandomSource, randrange } from '../framework/random';

/** Victim selection (senlin-behaviour §3.5); results are node ids. */

/** Bad nodes (ERROR, WARNING or tainted, then never created) in list order, and the good ones. */
export function filterErrorNodes(nodes: readonly NodeSnapshot[]): { bad: string[]; good: NodeSnapshot[] } {
  const bad: string[] = [];
  const notCreated: string[] = [];
  const good: NodeSnapshot[] = [];
  for (const n of nodes) {
    if (n.status === 'ERROR' || n.status === 'WARNING' || n.tainted === true) bad.push(n.id);
    else if (n.created_at === null || n.created_at === undefined) notCreated.push(n.id);
    else good.push(n);
  }
  for (const id of notCreated) bad.push(id);
  return { bad, good };
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

/**
 * Epoch milliseconds of a timestamp. The canonical UTC form (`2024-01-01T00:00:00[.sss]Z`, what the
 * database and toISOString write) is read digit by digit: Date.parse costs more than the rest of a
 * victim selection on a large cluster.
 */
export function timestampMillis(v: string | null | undefined): number {
  if (!v) return 0;
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
 * The `wanted` first nodes of `nodes` ordered by key (ascending, or descending when `last`), ties by
 * list position (reversed with `last`): the same result as a stable sort read from either end, but a
 * small pick from a large cluster costs one pass instead of a sort.
 */
function pick(nodes: readonly NodeSnapshot[], key: (n: NodeSnapshot) => number, wanted: number, last: boolean): string[] {
  const n = Math.min(wanted, nodes.length);
  if (n <= 0) return [];
  const keys = new Array<number>(nodes.length);
  for (let i = 0; i < nodes.length; i++) keys[i] = key(nodes[i]);
  // before(a, b): a comes first in the wanted order
  const before = last ? (a: number, b: number) => keys[a] > keys[b] || (keys[a] === keys[b] && a > b) : (a: number, b: number) => keys[a] < keys[b] || (keys[a] === keys[b] && a < b);
  let order: number[];
  if (n > 16) {
    order = Array.from(nodes, (_, i) => i).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  } else {
    order = new Array<number>(n);
    let size = 0;
    for (let i = 0; i < nodes.length; i++) {
      if (size === n && !before(i, order[n - 1])) continue;
      let at = size === n ? n - 1 : size;
      while (at > 0 && before(i, order[at - 1])) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = i;
      if (size < n) size++;
    }
  }
  const ids = new Array<string>(n);
  for (let i = 0; i < n; i++) ids[i] = nodes[order[i]].id;
  return ids;
}

/** Bad nodes first, then good nodes by created_at: oldest first or youngest first. */
export function nodesByAge(nodes: readonly NodeSnapshot[], count: number, oldFirst: boolean): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  for (const id of pick(good, (n) => time(n.created_at), count - bad.length, !oldFirst)) bad.push(id);
  return bad;
}

/** Bad nodes first, then good nodes whose profile is oldest. */
export function nodesByProfileAge(nodes: readonly NodeSnapshot[], count: number): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  for (const id of pick(good, (n) => time(n.profile_created_at), count - bad.length, false)) bad.push(id);
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
