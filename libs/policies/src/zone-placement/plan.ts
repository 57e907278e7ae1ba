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
