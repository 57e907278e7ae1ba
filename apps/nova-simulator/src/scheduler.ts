import type { HostCapacity, ResolvedHost } from './topology';

/**
 * Host selection the way nova-scheduler does it on the reference cloud: Placement drops hosts
 * without room for the flavor, then AvailabilityZoneFilter, ServerGroupAntiAffinityFilter and
 * ServerGroupAffinityFilter run, then the weighers (soft (anti-)affinity, then free RAM) rank the
 * rest: the best host plus alternates for a reschedule. A forced host (`ZONE:HOST`) skips the
 * filters and gets no alternates, as in Nova. The compute host's late group check
 * (`groupPolicyViolation`) is the caller's to run. Pure: no I/O, no clock.
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
  | { ok: true; host: ResolvedHost; alternates: ResolvedHost[]; forced: boolean; trace: string[] }
  | { ok: false; message: string; trace: string[] };

export const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';

/** Nova's `[scheduler] max_attempts` default: the chosen host plus two alternates. */
export const MAX_ATTEMPTS = 3;

const fits = (load: HostLoad, f: Flavor): boolean =>
  load.used.instances + 1 <= load.host.capacity.instances &&
  load.used.vcpus + f.vcpus <= load.host.capacity.vcpus &&
  load.used.ram_mb + f.ram <= load.host.capacity.ram_mb &&
  load.used.disk_gb + f.disk <= load.host.capacity.disk_gb;

const membersOn = (group: GroupPlacement, host: string): number => group.memberHosts.filter((h) => h === host).length;

/** Nova's ServerGroupAntiAffinityFilter / the compute late check share this rule. */
function antiAffinityAllows(group: GroupPlacement, host: string): boolean {
  return roomBeside(group, membersOn(group, host));
}

/** Anti-affinity's rule: another member fits on a host that holds `members` of them already. */
const roomBeside = (group: GroupPlacement, members: number): boolean => members < (group.maxServerPerHost ?? 1);

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
    // Nova keeps no retry information for a forced host: a build failure there is final.
    return { ok: true, host: hosts[0].host, alternates: [], forced: true, trace };
  }

  if (request.requestedHost !== null) step('requested destination host', (l) => l.host.name === request.requestedHost);
  if (request.requestedNode !== null) step('requested destination node', (l) => l.host.hypervisorHostname === request.requestedNode);
  if (request.zone !== null) step('AvailabilityZoneFilter', (l) => l.host.zone === request.zone);
  const group = request.group;
  if (group?.policy === 'anti-affinity') {
    const onHost = memberCounts(group);
    step('ServerGroupAntiAffinityFilter', (l) => roomBeside(group, onHost.get(l.host.name) ?? 0));
  }
  if (group?.policy === 'affinity') step('ServerGroupAffinityFilter', (l) => affinityAllows(group, l.host.name));
  if (hosts.length === 0) return { ok: false, message: NO_VALID_HOST, trace };

  // the members on each host counted once, not once per comparison (10,000 members × 10,000 hosts)
  const soft = group?.policy === 'soft-affinity' ? 1 : group?.policy === 'soft-anti-affinity' ? -1 : 0;
  const onHost = soft !== 0 ? memberCounts(group!) : null;
  const groupWeight = (l: HostLoad): number => (onHost ? soft * (onHost.get(l.host.name) ?? 0) : 0);
  const freeRam = (l: HostLoad) => l.host.capacity.ram_mb - l.used.ram_mb;
  const better = (a: { l: HostLoad; w: number; order: number }, b: { l: HostLoad; w: number; order: number }): number =>
    b.w - a.w || freeRam(b.l) - freeRam(a.l) || a.l.used.instances - b.l.used.instances || a.order - b.order;
  // the best MAX_ATTEMPTS hosts in the order a full sort by weight would give them (the order is
  // total: ties end on the host's place), kept while going through the hosts once
  const top: Array<{ l: HostLoad; w: number; order: number }> = [];
  hosts.forEach((l, order) => {
    const c = { l, w: groupWeight(l), order };
    if (top.length === MAX_ATTEMPTS && better(c, top[top.length - 1]) >= 0) return;
    let i = top.length;
    while (i > 0 && better(c, top[i - 1]) < 0) i--;
    top.splice(i, 0, c);
    if (top.length > MAX_ATTEMPTS) top.pop();
  });
  const [best, ...rest] = top.map((r) => r.l.host);
  return { ok: true, host: best, alternates: rest, forced: false, trace };
}

function memberCounts(group: GroupPlacement): Map<string, number> {
  const counts = new Map<string, number>();
  for (const h of group.memberHosts) counts.set(h, (counts.get(h) ?? 0) + 1);
  return counts;
}

/**
 * The compute host's late check (`_validate_instance_group_policy`), run under the group's lock
 * when the build starts there. `group.memberHosts` are the hosts of every other member already
 * on a host, whether or not the scheduler could see them. Returns Nova's reason, or null.
 */
export function groupPolicyViolation(group: GroupPlacement, host: string): string | null {
  if (group.policy === 'anti-affinity' && !antiAffinityAllows(group, host)) return 'Anti-affinity instance group policy was violated.';
  if (group.policy === 'affinity' && !affinityAllows(group, host)) return 'Affinity instance group policy was violated.';
  return null;
}
