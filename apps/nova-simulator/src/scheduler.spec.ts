import { NO_VALID_HOST, groupPolicyViolation, schedule, type GroupPlacement, type HostLoad, type ScheduleRequest } from './scheduler';
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

  it('forces a host past the filters, without alternates, leaving the group check to the compute host', () => {
    expect(pick(schedule(request({ zone: 'az1', forcedHost: 'h2' }), HOSTS.map(idle)))).toBe('h2');
    expect(pick(schedule(request({ zone: 'az2', forcedHost: 'h2' }), HOSTS.map(idle)))).toBe(NO_VALID_HOST);
    expect(pick(schedule(request({ forcedNode: 'h3' }), HOSTS.map(idle)))).toBe('h3');
    const forced = schedule(request({ zone: 'az1', forcedHost: 'h1', group: group('anti-affinity', ['h1']) }), HOSTS.map(idle));
    expect(forced).toMatchObject({ ok: true, forced: true, alternates: [] });
    expect(pick(forced)).toBe('h1');
  });

  it('ranks up to two alternates behind the chosen host (max_attempts 3)', () => {
    const four = [...HOSTS, host('h4', 'az2')];
    const r = schedule(request(), [busy(four[0], 3), busy(four[1], 1), idle(four[2]), busy(four[3], 2)]);
    expect(r.ok && [r.host.name, ...r.alternates.map((h) => h.name)]).toEqual(['h3', 'h2', 'h4']);
    expect(r.ok && r.forced).toBe(false);
    const zoned = schedule(request({ zone: 'az1' }), HOSTS.map(idle));
    expect(zoned.ok && zoned.alternates.map((h) => h.name)).toEqual(['h2']);
  });

  it('picks the host and alternates a full sort by weight would, for every group policy, on many hosts with ties', () => {
    // the ranking Nova's weighers give (soft group weight, free RAM, fewest instances, then the
    // host's place), by a full sort: the scheduler keeps only the best three while going through once
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let round = 0; round < 200; round++) {
      const hosts = Array.from({ length: 1 + random(40) }, (_, i) => host(`h${i}`, `az${1 + random(2)}`));
      const loads = hosts.map((h) => busy(h, random(4)));
      const members = Array.from({ length: random(30) }, () => hosts[random(hosts.length)].name);
      const policy = (['soft-affinity', 'soft-anti-affinity', 'anti-affinity', null] as const)[random(4)];
      const req = request({ group: policy ? group(policy, members, policy === 'anti-affinity' ? 2 : null) : null });
      const on = (name: string) => members.filter((m) => m === name).length;
      const weight = (l: HostLoad) => (policy === 'soft-affinity' ? on(l.host.name) : policy === 'soft-anti-affinity' ? -on(l.host.name) : 0);
      const eligible = loads.filter((l) => policy !== 'anti-affinity' || on(l.host.name) < 2);
      const sorted = eligible
        .map((l, order) => ({ l, order }))
        .sort((a, b) => weight(b.l) - weight(a.l) || (b.l.host.capacity.ram_mb - b.l.used.ram_mb) - (a.l.host.capacity.ram_mb - a.l.used.ram_mb) || a.l.used.instances - b.l.used.instances || a.order - b.order)
        .map((x) => x.l.host.name)
        .slice(0, 3);
      const r = schedule(req, loads);
      expect(r.ok ? [r.host.name, ...r.alternates.map((h) => h.name)] : []).toEqual(sorted);
    }
  });

  it.each<[string, GroupPlacement, string, string | null]>([
    ['anti-affinity on a member host', group('anti-affinity', ['h1']), 'h1', 'Anti-affinity instance group policy was violated.'],
    ['anti-affinity elsewhere', group('anti-affinity', ['h1']), 'h2', null],
    ['anti-affinity under max_server_per_host', group('anti-affinity', ['h1'], 2), 'h1', null],
    ['anti-affinity at max_server_per_host', group('anti-affinity', ['h1', 'h1'], 2), 'h1', 'Anti-affinity instance group policy was violated.'],
    ['affinity away from the members', group('affinity', ['h1']), 'h2', 'Affinity instance group policy was violated.'],
    ['affinity with the members', group('affinity', ['h1']), 'h1', null],
    ['affinity without placed members', group('affinity', []), 'h2', null],
    ['soft-anti-affinity never', group('soft-anti-affinity', ['h1']), 'h1', null],
    ['soft-affinity never', group('soft-affinity', ['h1']), 'h2', null],
  ])('the compute late check: %s', (_name, g, hostName, expected) => {
    expect(groupPolicyViolation(g, hostName)).toBe(expected);
  });

  it('records why hosts were dropped', () => {
    const r = schedule(request({ zone: 'az2', group: group('anti-affinity', ['h3']) }), HOSTS.map(idle));
    expect(r.trace).toContain('ServerGroupAntiAffinityFilter: (start: 1, end: 0)');
  });
});
