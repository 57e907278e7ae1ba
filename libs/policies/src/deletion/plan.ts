import { RandomSource } from '../framework/random';
import { NodeSnapshot } from '../framework/types';
import { nodesByAge, nodesByProfileAge, nodesByRandom, nodesInZones, victimsOverZones } from '../resize/victims';
import { ZoneIndex } from '../resize/zone-index';
import { ClusterSnapshot, VictimOrder } from '../framework/types';
import { requireListed } from '../framework/summary';
import { sortedKeys } from '../framework/plain-data';

export const DELETION_CRITERIA = ['OLDEST_FIRST', 'OLDEST_PROFILE_FIRST', 'YOUNGEST_FIRST', 'RANDOM'] as const;
export type DeletionCriteria = (typeof DELETION_CRITERIA)[number];

/** Victims among `nodes` by one of the deletion policy's criteria (senlin-behaviour §8). */
export function pickVictims(nodes: readonly NodeSnapshot[], count: number, criteria: DeletionCriteria, random: RandomSource): string[] {
  switch (criteria) {
    case 'RANDOM':
      return nodesByRandom(nodes, count, random);
    case 'OLDEST_PROFILE_FIRST':
      return nodesByProfileAge(nodes, count);
    case 'OLDEST_FIRST':
      return nodesByAge(nodes, count, true);
    default:
      return nodesByAge(nodes, count, false);
  }
}

/** How a criterion orders the nodes, for a summarised cluster's check (framework/summary.ts). */
export function victimOrder(criteria: DeletionCriteria): VictimOrder | 'random' {
  return criteria === 'RANDOM' ? 'random' : criteria === 'OLDEST_PROFILE_FIRST' ? 'profile' : criteria === 'OLDEST_FIRST' ? 'oldest' : 'youngest';
}

/**
 * Per zone of the plan (zones sorted by name, as Senlin), victims among that zone's nodes. A zone
 * with fewer nodes than its quota gives what it has (Senlin crashed).
 */
export function pickVictimsByZone(
  nodes: readonly NodeSnapshot[],
  zones: Record<string, unknown>,
  criteria: DeletionCriteria,
  random: RandomSource,
  /** the decision's zone index for these nodes, if any: the same lists without reading every node */
  index: ZoneIndex | null = null,
  /** a summarised cluster: each zone's listed nodes must be enough for its quota */
  cluster: ClusterSnapshot | null = null,
): string[] {
  const names = sortedKeys(zones);
  const byZone = index?.nodesIn(names) ?? nodesInZones(nodes, names);
  return victimsOverZones(names, (zone) => {
    const count = Number(zones[zone]);
    if (!(count > 0)) return null;
    if (cluster) requireListed(cluster, zone, byZone.get(zone) ?? [], count, victimOrder(criteria));
    return pickVictims(byZone.get(zone) ?? [], count, criteria, random);
  });
}
