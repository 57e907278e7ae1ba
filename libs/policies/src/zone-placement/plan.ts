import { NodeSnapshot } from '../framework/types';

export interface WeightedZone {
  name: string;
  weight: number;
}

/**
 * Senlin's `_create_plan` (senlin-behaviour §5.4), exact: quotas are `T * w / S` in doubles, zones are
 * visited by weight (descending to expand, ascending to shrink) with a stable sort so equal weights
 * keep spec order, and the result lists zones in spec order. Null when no feasible plan exists.
 *
 * `zones` are the usable zones in spec order; `current` counts nodes per usable zone.
 */
export function createZonePlan(
  current: ReadonlyMap<string, number>,
  zones: readonly WeightedZone[],
  count: number,
  expand: boolean,
): Record<string, number> | null {
  const k = zones.length;
  if (k > 8 || !distinctNames(zones)) return createZonePlanByName(current, zones, count, expand);
  // A handful of distinct zones, by position: no copy of the list sorted, no map of the plan (the
  // decision of a small cluster is mostly such fixed costs).
  let sum = 0;
  let total = 0;
  const have = new Array<number>(k);
  for (let j = 0; j < k; j++) {
    const z = zones[j];
    sum += z.weight;
    have[j] = current.get(z.name) ?? 0;
    total += have[j];
  }
  if (sum <= 0) return null;
  total = expand ? total + count : total - count;

  // visiting order: positions by weight, descending to expand, ascending to shrink, equal weights
  // in spec order (an insertion sort is stable)
  const order = new Array<number>(k);
  for (let j = 0; j < k; j++) {
    const w = zones[j].weight;
    let at = j;
    while (at > 0 && (expand ? zones[order[at - 1]].weight < w : zones[order[at - 1]].weight > w)) {
      order[at] = order[at - 1];
      at--;
    }
    order[at] = j;
  }
  // written out: Array.prototype.fill on a fresh array costs more than the plan's arithmetic
  const take = new Array<number>(k);
  for (let j = 0; j < k; j++) take[j] = 0;
  let remain = count;
  for (let v = 0; v < k; v++) {
    const j = order[v];
    const q = (total * zones[j].weight) / sum;
    const headroom = expand ? Math.ceil(q) - have[j] : have[j] - Math.floor(q);
    if (headroom <= 0) continue;
    if (headroom < remain) {
      take[j] = headroom;
      remain -= headroom;
    } else {
      take[j] = remain;
      remain = 0;
      break;
    }
  }
  if (remain > 0) return null;

  const result: Record<string, number> = {};
  for (let j = 0; j < k; j++) if (take[j] > 0) result[zones[j].name] = take[j];
  return result;
}

function distinctNames(zones: readonly WeightedZone[]): boolean {
  for (let i = 1; i < zones.length; i++) {
    for (let j = 0; j < i; j++) if (zones[i].name === zones[j].name) return false;
  }
  return true;
}

/** createZonePlan by zone name: many zones, or a list naming a zone twice (the drift check's spec as written). */
function createZonePlanByName(
  current: ReadonlyMap<string, number>,
  zones: readonly WeightedZone[],
  count: number,
  expand: boolean,
): Record<string, number> | null {
  let sum = 0;
  let total = 0;
  for (const z of zones) {
    sum += z.weight;
    total += current.get(z.name) ?? 0;
  }
  // All-zero weights divided by zero in Senlin; decision 11 keeps them out of stored specs.
  if (sum <= 0) return null;
  total = expand ? total + count : total - count;

  const order = zones.length === 1 ? zones : [...zones].sort(expand ? (a, b) => b.weight - a.weight : (a, b) => a.weight - b.weight);
  const plan = new Map<string, number>();
  let remain = count;
  for (const z of order) {
    const q = (total * z.weight) / sum;
    const c = current.get(z.name) ?? 0;
    const headroom = expand ? Math.ceil(q) - c : c - Math.floor(q);
    if (headroom <= 0) continue;
    if (headroom < remain) {
      plan.set(z.name, headroom);
      remain -= headroom;
    } else {
      plan.set(z.name, remain);
      remain = 0;
      break;
    }
  }
  if (remain > 0) return null;

  const result: Record<string, number> = {};
  for (const z of zones) {
    const n = plan.get(z.name);
    if (n !== undefined && n > 0) result[z.name] = n;
  }
  return result;
}

/**
 * The most victims createZonePlan(current, zones, n, false) gives each zone, for every n ≤ count:
 * a zone gets at most min(n, c − ⌊(T − n)·w / S⌋) (its headroom, or what is left to place), and
 * both grow with n (the same double operations, each monotonic). Every zone of `zones` is in the
 * result, in spec order; all zero when no plan exists.
 */
export function shrinkShares(current: ReadonlyMap<string, number>, zones: readonly WeightedZone[], count: number): Map<string, number> {
  let sum = 0;
  let total = 0;
  for (const z of zones) {
    sum += z.weight;
    total += current.get(z.name) ?? 0;
  }
  const shares = new Map<string, number>();
  const none = sum <= 0 || count <= 0;
  total -= count;
  for (const z of zones) {
    const headroom = none ? 0 : (current.get(z.name) ?? 0) - Math.floor((total * z.weight) / sum);
    shares.set(z.name, Math.max(0, Math.min(count, headroom)));
  }
  return shares;
}

/**
 * Nodes per usable zone (§5.3 step 5). A node counts in the zone it recorded, else in the zone Nova
 * reports for its server; a recorded zone that is not usable is ignored (decision 12).
 */
export function zoneDistribution(nodes: readonly NodeSnapshot[], usable: readonly string[]): Map<string, number> {
  const k = usable.length;
  const counts = new Array<number>(k).fill(0);
  // A scan over a handful of zone names beats hashing: snapshot strings come from JSON.parse and are
  // not internalized, so every Map lookup hashes and compares them anyway.
  const byName = k > 8 ? new Map(usable.map((z, j) => [z, j])) : null;
  for (let i = 0; i < nodes.length; i++) {
    // nodeZone, written out: this loop runs over every node of every decision
    const node = nodes[i];
    const data = node.data;
    const placement = data === null || data === undefined ? undefined : data.placement;
    let zone = placement === null || placement === undefined ? undefined : placement.zone;
    if (typeof zone !== 'string') {
      const server = node.server;
      zone = server === null || server === undefined ? undefined : server.availability_zone;
      if (typeof zone !== 'string') continue;
    }
    if (byName) {
      const j = byName.get(zone);
      if (j !== undefined) counts[j]++;
      continue;
    }
    for (let j = 0; j < k; j++) {
      if (zone === usable[j]) {
        counts[j]++;
        break;
      }
    }
  }
  const result = new Map<string, number>();
  for (let j = 0; j < k; j++) result.set(usable[j], counts[j]);
  return result;
}
