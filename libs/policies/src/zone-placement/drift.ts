import { DriftContext, DriftCountsContext, DriftNode, PolicyDriftFinding } from '../framework/drift';
import { WeightedZone, createZonePlan } from './plan';

/**
 * Zone placement's drift hook: its weights, compared with where the ACTIVE nodes are. The
 * distribution Senlin's plan gives for that many nodes from scratch is the target; a zone more than
 * one node away is drift.
 */
export function zoneDrift(ctx: DriftContext, properties: Record<string, unknown> | undefined): PolicyDriftFinding[] {
  const nodes = ctx.nodes;
  const target = zoneTarget(properties, nodes.length, ctx.cloud.availability_zones);
  if (typeof target === 'string') return target ? [{ kind: 'policy_unreadable', node_ids: [], message: target }] : [];
  const actual = zoneCounts(nodes);
  const zones = [...new Set([...Object.keys(target), ...Object.keys(actual)])];
  const off = zones.filter((z) => Math.abs((actual[z] ?? 0) - (target[z] ?? 0)) > 1);
  if (!off.length) return [];
  const over = new Set(zones.filter((z) => (actual[z] ?? 0) > (target[z] ?? 0)));
  const shown = (m: Record<string, number>) => zones.map((z) => `${z}: ${m[z] ?? 0}`).join(', ');
  return [
    {
      kind: 'zone_imbalance',
      node_ids: nodes.filter((n) => over.has(zoneOf(n) ?? '')).map((n) => n.id),
      message:
        `the ${nodes.length} active node(s) are spread ${shown(actual)}; ` +
        `the weights ask for ${shown(target)} (more than one node off in ${off.join(', ')}).`,
      detail: { expected: target, actual },
    },
  ];
}

/**
 * zoneDrift from the counts of a summarised cluster: no finding when no zone is more than one node
 * off (or the same unreadable-policy finding); null when one is, since the finding names the nodes.
 */
export function zoneDriftFromCounts(ctx: DriftCountsContext, properties: Record<string, unknown> | undefined): PolicyDriftFinding[] | null {
  const target = zoneTarget(properties, ctx.active, ctx.cloud.availability_zones);
  if (typeof target === 'string') return target ? [{ kind: 'policy_unreadable', node_ids: [], message: target }] : [];
  const actual = new Map<string, number>();
  for (const [zone, n] of ctx.zones) if (zone && n > 0) actual.set(zone, n);
  const zones = new Set([...Object.keys(target), ...actual.keys()]);
  for (const z of zones) if (Math.abs((actual.get(z) ?? 0) - (Object.prototype.hasOwnProperty.call(target, z) ? target[z] : 0)) > 1) return null;
  return [];
}

/** The per-zone target for `count` nodes; a string says why there is none ('' for nothing to say). */
function zoneTarget(properties: Record<string, unknown> | undefined, count: number, facts: readonly unknown[]): Record<string, number> | string {
  const raw = properties?.zones;
  if (!Array.isArray(raw) || raw.length === 0) return 'properties.zones: must be a non-empty list to judge the zone distribution.';
  const zones: WeightedZone[] = [];
  for (let i = 0; i < raw.length; i++) {
    const z = raw[i] as Record<string, unknown> | null;
    if (!z || typeof z.name !== 'string') return `properties.zones[${i}].name: must be a string to judge the zone distribution.`;
    const weight = z.weight === undefined ? 100 : Number(z.weight);
    if (!Number.isFinite(weight) || weight < 0) return `properties.zones[${i}].weight: must be a non-negative number, not ${JSON.stringify(z.weight)}.`;
    zones.push({ name: z.name, weight });
  }
  const available = new Set(availableZones(facts));
  const usable = zones.filter((z) => available.has(z.name));
  if (count === 0 || usable.length === 0) return '';
  const plan = createZonePlan(new Map(), usable, count, true);
  if (!plan) return '';
  return plan;
}

function availableZones(facts: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const f of facts) {
    if (typeof f === 'string') out.push(f);
    else if (f && typeof f === 'object' && typeof (f as { zoneName?: unknown }).zoneName === 'string') {
      const state = (f as { zoneState?: { available?: boolean } | null }).zoneState;
      if (state?.available !== false) out.push((f as { zoneName: string }).zoneName);
    }
  }
  return out;
}

/** The zone a node is in: the one it was placed in, else the one Nova reports. */
export function zoneOf(node: Pick<DriftNode, 'data' | 'server'>): string | undefined {
  const z = (node.data?.placement as Record<string, unknown> | undefined)?.zone ?? node.server?.availability_zone;
  return typeof z === 'string' && z ? z : undefined;
}

export function zoneCounts(nodes: readonly Pick<DriftNode, 'data' | 'server'>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of nodes) {
    const z = zoneOf(n);
    if (z) out[z] = (out[z] ?? 0) + 1;
  }
  return out;
}
