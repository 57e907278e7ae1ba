import { ActionData, NodeSnapshot, nodeZone, pyInt } from '@trellis/policies';

const asRecord = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * The zone of each new node, as the engine will merge them: an affinity entry's own zone
 * (`data.placement.placements[i].zone`) wins, else zone placement's `data.creation.zones` counts laid
 * out in the plan's order. null: no policy chose a zone for that node (Nova will).
 */
export function newNodeZones(data: ActionData, count: number): Array<string | null> {
  const zones: Array<string | null> = new Array<string | null>(count).fill(null);
  const planned = asRecord(asRecord(data.creation)?.zones);
  let i = 0;
  if (planned) {
    for (const [zone, n] of Object.entries(planned)) {
      const k = pyInt(n) ?? 0;
      for (let j = 0; j < k && i < count; j++) zones[i++] = zone;
    }
  }
  const placements = asRecord(data.placement)?.placements;
  if (Array.isArray(placements)) {
    for (let j = 0; j < count; j++) {
      const zone = asRecord(placements[j])?.zone;
      if (typeof zone === 'string') zones[j] = zone;
    }
  }
  return zones;
}

export interface ZoneLoad {
  zone: string;
  existing: number;
  added: number;
}

/** Nodes per zone after the action, for the zones that receive new nodes, in the order they first receive one. */
export function zoneLoads(nodes: readonly NodeSnapshot[], zones: ReadonlyArray<string | null>): ZoneLoad[] {
  const loads = new Map<string, ZoneLoad>();
  for (const zone of zones) {
    if (zone === null) continue;
    const load = loads.get(zone);
    if (load) load.added++;
    else loads.set(zone, { zone, existing: 0, added: 1 });
  }
  for (const node of nodes) {
    const zone = nodeZone(node);
    const load = zone === undefined ? undefined : loads.get(zone);
    if (load) load.existing++;
  }
  return [...loads.values()];
}
