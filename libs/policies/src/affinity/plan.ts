import { HypervisorFact } from '../framework/cloud';

export interface PlacementEntry {
  servergroup?: string;
  zone?: string;
}

/**
 * Decision 9: the first hypervisor (Nova's order) whose hypervisor_hostname contains `drs`,
 * case-insensitively. Senlin's regex `.*drs*` also matched names that merely contain `dr`.
 */
export function pickDrsHypervisor(hypervisors: readonly HypervisorFact[]): HypervisorFact | null {
  for (const h of hypervisors) {
    if (typeof h.hypervisor_hostname === 'string' && h.hypervisor_hostname.toLowerCase().includes('drs')) return h;
  }
  return null;
}

/** Nova's `ZONE:HOST` form with the service host, which is what Nova expects (decision 9). */
export function drsZone(zone: string, hypervisor: HypervisorFact): string {
  return `${zone}:${hypervisor.service?.host ?? hypervisor.hypervisor_hostname}`;
}

/** One entry per new node (Senlin's `[entry] * count`), each its own object. */
export function affinityPlacements(entry: PlacementEntry, count: number): PlacementEntry[] {
  const placements = new Array<PlacementEntry>(count);
  for (let i = 0; i < count; i++) placements[i] = { ...entry };
  return placements;
}

export type ServerGroupChoice =
  | { kind: 'inherit'; nameOrId: string }
  | { kind: 'find-or-create'; name: string }
  | { kind: 'create'; name: null };

/**
 * Which group attach uses (decision 6): the profile's `properties.scheduler_hints.group` wins over the
 * policy's `servergroup.name`; a profile group must exist, a policy name is created when missing.
 */
export function chooseServerGroup(profileSpec: Record<string, unknown> | null | undefined, policyGroupName: string | null): ServerGroupChoice {
  const props = profileSpec?.properties as Record<string, unknown> | undefined;
  const hints = props?.scheduler_hints as Record<string, unknown> | undefined;
  const group = hints?.group;
  if (typeof group === 'string' && group) return { kind: 'inherit', nameOrId: group };
  if (policyGroupName) return { kind: 'find-or-create', name: policyGroupName };
  return { kind: 'create', name: null };
}
