import type { HostCapacity, ResolvedHost } from './topology';

/**
 * Host selection the way nova-scheduler does it on the reference cloud: Placement drops hosts
 * without room for the flavor, then AvailabilityZoneFilter, ServerGroupAntiAffinityFilter and
 * ServerGroupAffinityFilter run, then the weighers (soft (anti-)affinity, then free RAM) pick the
 * best host. A forced host (`ZONE:HOST`) skips the filters as in Nova, and the compute host's late
 * group check then fails the build if a hard group policy is violated. Pure: no I/O, no clock.
 */

export type GroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';

export interface Flavor {
  vcpus: number;
  ram: number;
  disk: number;
}

export interface HostLoad {
  host: ResolvedHost;
  used: HostCapacity;
}

export interface GroupPlacement {
  policy: GroupPolicy;
  maxServerPerHost: number | null;
  /** the host of every other member that holds a host (one entry per member) */
  memberHosts: string[];
}

export interface ScheduleRequest {
  flavor: Flavor;
  /** requested availability zone; null = any */
  zone: string | null;
  /** `ZONE:HOST[:NODE]` forced host / `ZONE::NODE` forced node (filters skipped) */
  forcedHost: string | null;
  forcedNode: string | null;
  /** microversion 2.74 `host` / `hypervisor_hostname` (filters still run) */
  requestedHost: string | null;
  requestedNode: string | null;
  group: GroupPlacement | null;
}

export type ScheduleResult =
  | { ok: true; host: ResolvedHost; trace: string[] }
  | { ok: false; message: string; trace: string[] };

export const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';

const fits = (load: HostLoad, f: Flavor): boolean =>
  load.used.instances + 1 <= load.host.capacity.instances &&
  load.used.vcpus + f.vcpus <= load.host.capacity.vcpus &&
  load.used.ram_mb + f.ram <= load.host.capacity.ram_mb &&
  load.used.disk_gb + f.disk <= load.host.capacity.disk_gb;

const membersOn = (group: GroupPlacement, host: string): number => group.memberHosts.filter((h) => h === host).length;

/** Nova's ServerGroupAntiAffinityFilter / the compute late check share this rule. */
function antiAffinityAllows(group: GroupPlacement, host: string): boolean {
  return membersOn(group, host) < (group.maxServerPerHost ?? 1);
}

function affinityAllows(group: GroupPlacement, host: string): boolean {
  return group.memberHosts.length === 0 || group.memberHosts.includes(host);
}

export function schedule(request: ScheduleRequest, loads: HostLoad[]): ScheduleResult {
  const trace: string[] = [];
  let hosts = loads;
  const step = (name: string, keep: (l: HostLoad) => boolean) => {
    const start = hosts.length;
    hosts = hosts.filter(keep);
    trace.push(`${name}: (start: ${start}, end: ${hosts.length})`);
  };

  step('Placement (capacity for the flavor)', (l) => fits(l, request.flavor));
  if (request.zone !== null) step('Placement (availability zone aggregate)', (l) => l.host.zone === request.zone);

  if (request.forcedHost !== null || request.forcedNode !== null) {
    step('forced host/node', (l) =>
      (request.forcedHost === null || l.host.name === request.forcedHost) &&
      (request.forcedNode === null || l.host.hypervisorHostname === request.forcedNode),
    );
    if (hosts.length === 0) return { ok: false, message: NO_VALID_HOST, trace };
    const chosen = hosts[0].host;
    const g = request.group;
    const violated =
      g !== null &&
      ((g.policy === 'anti-affinity' && !antiAffinityAllows(g, chosen.name)) ||
        (g.policy === 'affinity' && !affinityAllows(g, chosen.name)));
    if (violated) {
      trace.push(`compute ${chosen.name}: ${g.policy === 'affinity' ? 'Affinity' : 'Anti-affinity'} instance group policy was violated.`);
      // A forced host has no alternates to reschedule to.
      return {
        ok: false,
        message: 'Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures.',
        trace,
      };
    }
    return { ok: true, host: chosen, trace };
  }

  if (request.requestedHost !== null) step('requested destination host', (l) => l.host.name === request.requestedHost);
  if (request.requestedNode !== null) step('requested destination node', (l) => l.host.hypervisorHostname === request.requestedNode);
  if (request.zone !== null) step('AvailabilityZoneFilter', (l) => l.host.zone === request.zone);
  const group = request.group;
  if (group?.policy === 'anti-affinity') step('ServerGroupAntiAffinityFilter', (l) => antiAffinityAllows(group, l.host.name));
  if (group?.policy === 'affinity') step('ServerGroupAffinityFilter', (l) => affinityAllows(group, l.host.name));
  if (hosts.length === 0) return { ok: false, message: NO_VALID_HOST, trace };

  const groupWeight = (l: HostLoad): number => {
    if (group?.policy === 'soft-affinity') return membersOn(group, l.host.name);
    if (group?.policy === 'soft-anti-affinity') return -membersOn(group, l.host.name);
    return 0;
  };
  const freeRam = (l: HostLoad) => l.host.capacity.ram_mb - l.used.ram_mb;
  const ranked = hosts
    .map((l, order) => ({ l, order }))
    .sort(
      (a, b) =>
        groupWeight(b.l) - groupWeight(a.l) ||
        freeRam(b.l) - freeRam(a.l) ||
        a.l.used.instances - b.l.used.instances ||
        a.order - b.order,
    );
  return { ok: true, host: ranked[0].l.host, trace };
}
