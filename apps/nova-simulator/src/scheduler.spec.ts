import { NO_VALID_HOST, schedule, type GroupPlacement, type HostLoad, type ScheduleRequest } from './scheduler';
import { DEFAULT_CAPACITY, type ResolvedHost } from './topology';

const host = (name: string, zone: string, capacity = {}): ResolvedHost => ({
  name,
  zone,
  hypervisorHostname: name,
  capacity: { ...DEFAULT_CAPACITY, ...capacity },
});

const idle = (h: ResolvedHost): HostLoad => ({ host: h, used: { instances: 0, vcpus: 0, ram_mb: 0, disk_gb: 0 } });
const busy = (h: ResolvedHost, instances: number): HostLoad => ({
  host: h,
  used: { instances, vcpus: instances, ram_mb: 512 * instances, disk_gb: instances },
});

const HOSTS = [host('h1', 'az1'), host('h2', 'az1'), host('h3', 'az2')];
const request = (over: Partial<ScheduleRequest> = {}): ScheduleRequest => ({
  flavor: { vcpus: 1, ram: 512, disk: 1 },
  zone: null,
  forcedHost: null,
  forcedNode: null,
  requestedHost: null,
  requestedNode: null,
  group: null,
  ...over,
});
const group = (policy: GroupPlacement['policy'], memberHosts: string[], maxServerPerHost: number | null = null): GroupPlacement => ({
  policy,
  memberHosts,
  maxServerPerHost,
});
const pick = (r: ReturnType<typeof schedule>) => (r.ok ? r.host.name : r.message);

describe('schedule', () => {
  it.each<[string, ScheduleRequest, HostLoad[], string]>([
    ['spreads to the host with most free RAM', request(), [busy(HOSTS[0], 2), busy(HOSTS[1], 1), busy(HOSTS[2], 3)], 'h2'],
    ['keeps to the requested zone', request({ zone: 'az2' }), HOSTS.map(idle), 'h3'],
    ['anti-affinity avoids member hosts', request({ group: group('anti-affinity', ['h1', 'h2']) }), HOSTS.map(idle), 'h3'],
    ['anti-affinity fails when every host has a member', request({ group: group('anti-affinity', ['h1', 'h2', 'h3']) }), HOSTS.map(idle), NO_VALID_HOST],
    ['anti-affinity + zone fails when the zone is used up', request({ zone: 'az2', group: group('anti-affinity', ['h3']) }), HOSTS.map(idle), NO_VALID_HOST],
    ['max_server_per_host 2 allows a second member', request({ group: group('anti-affinity', ['h1', 'h2', 'h3', 'h1', 'h2'], 2) }), HOSTS.map(idle), 'h3'],
    ['max_server_per_host 2 fails at the third', request({ group: group('anti-affinity', ['h1', 'h1', 'h2', 'h2', 'h3', 'h3'], 2) }), HOSTS.map(idle), NO_VALID_HOST],
    ['affinity follows the members', request({ group: group('affinity', ['h2']) }), [idle(HOSTS[0]), busy(HOSTS[1], 10), idle(HOSTS[2])], 'h2'],
    ['affinity with no placed member goes anywhere', request({ group: group('affinity', []) }), HOSTS.map(idle), 'h1'],
    ['affinity into another zone fails', request({ zone: 'az2', group: group('affinity', ['h1']) }), HOSTS.map(idle), NO_VALID_HOST],
    ['affinity on a full host fails', request({ group: group('affinity', ['h1']) }), [busy(host('h1', 'az1', { instances: 1 }), 1), idle(HOSTS[1])], NO_VALID_HOST],
    ['soft-affinity prefers the members host', request({ group: group('soft-affinity', ['h3']) }), HOSTS.map(idle), 'h3'],
    ['soft-affinity still places when that host is full', request({ group: group('soft-affinity', ['h1']) }), [busy(host('h1', 'az1', { instances: 1 }), 1), idle(HOSTS[1])], 'h2'],
    ['soft-anti-affinity prefers an empty host', request({ group: group('soft-anti-affinity', ['h1', 'h2']) }), HOSTS.map(idle), 'h3'],
    ['soft-anti-affinity stacks when it must', request({ group: group('soft-anti-affinity', ['h1', 'h2', 'h3', 'h1', 'h3']) }), HOSTS.map(idle), 'h2'],
    ['capacity in vcpus is enforced', request({ flavor: { vcpus: 4, ram: 512, disk: 1 } }), [idle(host('h1', 'az1', { vcpus: 2 }))], NO_VALID_HOST],
    ['capacity in instances is enforced', request(), [busy(host('h1', 'az1', { instances: 3 }), 3), idle(host('h2', 'az1', { instances: 0 }))], NO_VALID_HOST],
    ['2.74 requested host still runs the filters', request({ requestedHost: 'h1', group: group('anti-affinity', ['h1']) }), HOSTS.map(idle), NO_VALID_HOST],
  ])('%s', (_name, req, loads, expected) => {
    expect(pick(schedule(req, loads))).toBe(expected);
  });

  it('forces a host past the filters, then fails the build on the compute late check', () => {
    expect(pick(schedule(request({ zone: 'az1', forcedHost: 'h2' }), HOSTS.map(idle)))).toBe('h2');
    expect(pick(schedule(request({ zone: 'az2', forcedHost: 'h2' }), HOSTS.map(idle)))).toBe(NO_VALID_HOST);
    expect(pick(schedule(request({ forcedNode: 'h3' }), HOSTS.map(idle)))).toBe('h3');
    const late = schedule(request({ zone: 'az1', forcedHost: 'h1', group: group('anti-affinity', ['h1']) }), HOSTS.map(idle));
    expect(late.ok).toBe(false);
    expect(!late.ok && late.message).toMatch(/^Exceeded maximum number of retries/);
    expect(late.trace.join(' ')).toContain('Anti-affinity instance group policy was violated.');
    expect(pick(schedule(request({ forcedHost: 'h1', group: group('soft-anti-affinity', ['h1']) }), HOSTS.map(idle)))).toBe('h1');
  });

  it('records why hosts were dropped', () => {
    const r = schedule(request({ zone: 'az2', group: group('anti-affinity', ['h3']) }), HOSTS.map(idle));
    expect(r.trace).toContain('ServerGroupAntiAffinityFilter: (start: 1, end: 0)');
  });
});
