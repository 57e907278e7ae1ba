import fc from 'fast-check';
import { FLAVORS, SimulatorState, type CreateServerInput, type SimServerGroup } from './simulator-state';
import { DEFAULT_TOPOLOGY, type Topology } from './topology';

/** az1: two hosts, az2: two hosts (the harness's shape). */
const FOUR_HOSTS: Topology = {
  zones: [
    { name: 'az1', hosts: [{ name: 'fake-host-1' }, { name: 'fake-host-2' }] },
    { name: 'az2', hosts: [{ name: 'fake-host-3' }, { name: 'fake-host-4', hypervisor_hostname: 'fake-drs-cluster-4' }] },
  ],
};

function cloud(topology: Topology = DEFAULT_TOPOLOGY, buildDelayMs = 400) {
  const clock = { now: 1_000_000 };
  const state = new SimulatorState({
    topology,
    buildDelayMs,
    adminPassword: 'admin',
    demoPassword: 'demo',
    tokenLifetimeMs: 60_000,
    now: () => clock.now,
  });
  const input = (over: Partial<CreateServerInput> = {}): CreateServerInput => ({
    name: 'vm',
    projectId: state.projectId('demo'),
    userId: 'u',
    flavor: FLAVORS[0],
    imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
    metadata: {},
    keyName: null,
    userData: null,
    description: null,
    tags: [],
    zone: null,
    forcedHost: null,
    forcedNode: null,
    requestedHost: null,
    requestedNode: null,
    group: null,
    ...over,
  });
  const group = (policy: SimServerGroup['policy']) =>
    state.createGroup({ name: policy, policy, rules: {}, projectId: state.projectId('demo'), userId: 'u' });
  const at = (ms: number) => {
    clock.now = 1_000_000 + ms;
  };
  return { state, input, group, at };
}

describe('SimulatorState over time (build delay 400: scheduler at 100, claim at 200, done at 400)', () => {
  it('is BUILD without a host until the scheduler runs, BUILD on its host while spawning, then ACTIVE', () => {
    const { state, input, at } = cloud();
    const s = state.createServer(input());
    expect(state.phase(s)).toEqual({ status: 'BUILD', taskState: 'scheduling', host: null });
    expect(s.zone).toBeNull();
    at(99);
    expect(state.phase(s).host).toBeNull();
    at(100);
    expect(state.phase(s)).toMatchObject({ status: 'BUILD', taskState: 'spawning', host: { name: 'host-1' } });
    expect(s.zone).toBe('az1');
    at(399);
    expect(state.status(s)).toBe('BUILD');
    at(400);
    expect(state.phase(s)).toMatchObject({ status: 'ACTIVE', taskState: null, host: { name: 'host-1' } });
  });

  it('keeps the requested zone while scheduling', () => {
    const { state, input } = cloud();
    expect(state.createServer(input({ zone: 'az2' })).zone).toBe('az2');
  });

  it('turns ERROR with NoValidHost when the scheduler runs, not before and not at the end of the build', () => {
    const { state, input, at } = cloud();
    const s = state.createServer(input({ zone: 'az1', forcedHost: 'host-5' }));
    at(99);
    expect(state.status(s)).toBe('BUILD');
    at(100);
    expect(state.phase(s)).toEqual({ status: 'ERROR', taskState: null, host: null });
    expect(s.fault).toMatchObject({ code: 500, message: 'No valid host was found. There are not enough hosts available.', created: 1_000_100 });
    expect(s.zone).toBe('az1');
  });

  it('deletes through task_state deleting (still on its host), then DELETED (host freed, out of its group), then gone', () => {
    const { state, input, group, at } = cloud();
    const g = group('anti-affinity');
    const s = state.createServer(input({ group: g }));
    at(400);
    state.deleteServer(s);
    expect(state.phase(s)).toMatchObject({ status: 'ACTIVE', taskState: 'deleting', host: { name: 'host-1' } });
    expect(state.loads().find((l) => l.host.name === 'host-1')?.used.instances).toBe(1);
    expect(state.groupMembers(g)).toEqual([s.id]);
    state.deleteServer(s);
    expect(s.deletedAt).toBe(1_000_400);
    at(600);
    expect(state.phase(s)).toMatchObject({ status: 'DELETED', taskState: null });
    expect(state.loads().every((l) => l.used.instances === 0)).toBe(true);
    expect(state.groupMembers(g)).toEqual([]);
    expect(state.server(s.id)).toBeDefined();
    at(800);
    expect(state.server(s.id)).toBeUndefined();
  });

  it('deletes a server that has no host yet at once, and never schedules it', () => {
    const { state, input, group, at } = cloud();
    const g = group('anti-affinity');
    const s = state.createServer(input({ group: g }));
    state.deleteServer(s);
    expect(state.server(s.id)).toBeUndefined();
    expect(state.groupMembers(g)).toEqual([]);
    at(400);
    expect(state.loads().every((l) => l.used.instances === 0)).toBe(true);
  });

  it('lets concurrent boots into a full anti-affinity group past the scheduler; the compute late check fails the extra one', () => {
    const { state, input, group, at } = cloud(FOUR_HOSTS);
    const g = group('anti-affinity');
    const servers = [1, 2, 3].map(() => state.createServer(input({ zone: 'az1', group: g })));
    at(100);
    // all three got a host from the scheduler: it could not see the other members yet
    expect(servers.map((s) => state.phase(s).status)).toEqual(['BUILD', 'BUILD', 'BUILD']);
    expect(servers.every((s) => state.phase(s).host !== null)).toBe(true);
    at(400);
    expect(servers.map((s) => state.status(s))).toEqual(['ACTIVE', 'ACTIVE', 'ERROR']);
    expect(new Set(servers.slice(0, 2).map((s) => state.phase(s).host?.name))).toEqual(new Set(['fake-host-1', 'fake-host-2']));
    const failed = servers[2];
    expect(failed.fault?.message).toBe(
      `Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance ${failed.id}.`,
    );
    expect(failed.fault?.details).toContain('fake-host-1: Anti-affinity instance group policy was violated.');
    expect(state.phase(failed).host).toBeNull();
    expect(state.groupMembers(g)).toEqual(servers.map((s) => s.id));
    expect(state.loads().map((l) => l.used.instances)).toEqual([1, 1, 0, 0]);
  });

  it('gives NoValidHost to boots that come one after another, once the earlier members are claimed', () => {
    const { state, input, group, at } = cloud(FOUR_HOSTS);
    const g = group('anti-affinity');
    const first = state.createServer(input({ zone: 'az1', group: g }));
    at(200);
    const second = state.createServer(input({ zone: 'az1', group: g }));
    at(400);
    const third = state.createServer(input({ zone: 'az1', group: g }));
    at(1000);
    expect([first, second, third].map((s) => state.status(s))).toEqual(['ACTIVE', 'ACTIVE', 'ERROR']);
    expect(third.fault?.message).toBe('No valid host was found. There are not enough hosts available.');
    expect(third.fault?.created).toBe(1_000_500);
  });

  it('decides by the clock, not by when anyone looked', () => {
    const { state, input, group, at } = cloud(FOUR_HOSTS);
    const g = group('anti-affinity');
    const pair = [state.createServer(input({ zone: 'az1', group: g })), state.createServer(input({ zone: 'az1', group: g }))];
    at(5000);
    const late = state.createServer(input({ zone: 'az1', group: g }));
    at(6000);
    expect(pair.map((s) => state.status(s))).toEqual(['ACTIVE', 'ACTIVE']);
    expect(late.fault?.message).toBe('No valid host was found. There are not enough hosts available.');
  });

  it('reschedules a concurrent affinity member to the alternate that holds the group', () => {
    const { state, input, group, at } = cloud(FOUR_HOSTS);
    const g = group('affinity');
    const [a, b] = [state.createServer(input({ zone: 'az1', group: g })), state.createServer(input({ zone: 'az1', group: g }))];
    at(400);
    expect([a, b].map((s) => state.phase(s))).toEqual([
      expect.objectContaining({ status: 'ACTIVE', host: expect.objectContaining({ name: 'fake-host-1' }) }),
      expect.objectContaining({ status: 'ACTIVE', host: expect.objectContaining({ name: 'fake-host-1' }) }),
    ]);
  });

  it('fails a forced host that breaks anti-affinity with the compute reason, at the end of the build', () => {
    const { state, input, group, at } = cloud(FOUR_HOSTS);
    const g = group('anti-affinity');
    state.createServer(input({ zone: 'az1', forcedHost: 'fake-host-1', group: g }));
    at(400);
    const forced = state.createServer(input({ zone: 'az1', forcedHost: 'fake-host-1', group: g }));
    at(600);
    expect(state.phase(forced)).toMatchObject({ status: 'BUILD', taskState: 'spawning', host: { name: 'fake-host-1' } });
    at(800);
    expect(state.phase(forced)).toEqual({ status: 'ERROR', taskState: null, host: null });
    expect(forced.fault?.message).toBe('Anti-affinity instance group policy was violated.');
  });

  it('keeps a deleting member in the way of anti-affinity until its host is freed', () => {
    const { state, input, group, at } = cloud({ zones: [{ name: 'az1', hosts: [{ name: 'only' }] }] });
    const g = group('anti-affinity');
    const old = state.createServer(input({ group: g }));
    at(400);
    state.deleteServer(old);
    const blocked = state.createServer(input({ group: g }));
    at(1000);
    expect(state.status(blocked)).toBe('ERROR');
    state.deleteServer(blocked);
    at(2000);
    const next = state.createServer(input({ group: g }));
    at(2400);
    expect(state.status(next)).toBe('ACTIVE');
  });

  it('schedules a server whose group was deleted meanwhile without the group', () => {
    const { state, input, group, at } = cloud({ zones: [{ name: 'az1', hosts: [{ name: 'only' }] }] });
    const g = group('anti-affinity');
    state.createServer(input({ group: g }));
    const second = state.createServer(input({ group: g }));
    state.deleteGroup(g.id);
    at(400);
    expect(state.status(second)).toBe('ACTIVE');
  });

  it('moves its clock forward on request, and expires tokens at the end of their lifetime', () => {
    const { state } = cloud();
    const token = state.identity.authenticate({
      auth: { identity: { methods: ['password'], password: { user: { name: 'demo', domain: { id: 'default' }, password: 'demo' } } } },
    });
    expect(state.identity.resolve(token.id)).not.toBeNull();
    state.advanceClock(59_999);
    expect(state.identity.resolve(token.id)).not.toBeNull();
    state.advanceClock(1);
    expect(state.identity.resolve(token.id)).toBeNull();
    expect(() => state.advanceClock(-1)).toThrow('advanceClock: ms must be a whole number >= 0, got -1');
  });

  it('never puts more ACTIVE hard anti-affinity members on a host than the group allows, however creates, deletes and time interleave', () => {
    type Step = { kind: 'create'; zone: 'az1' | 'az2' | null } | { kind: 'delete'; pick: number } | { kind: 'wait'; ms: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), zone: fc.constantFrom('az1' as const, 'az2' as const, null) }),
      fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 500 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 0, max: 400 }), (steps, max, delay) => {
        const { state, input, at } = cloud(FOUR_HOSTS, delay);
        const g = state.createGroup({ name: 'g', policy: 'anti-affinity', rules: { max_server_per_host: max }, projectId: state.projectId('demo'), userId: 'u' });
        let t = 0;
        const check = () => {
          const perHost = new Map<string, number>();
          for (const id of state.groupMembers(g)) {
            const s = state.server(id)!;
            const phase = state.phase(s);
            if (phase.status !== 'ACTIVE') continue;
            perHost.set(phase.host!.name, (perHost.get(phase.host!.name) ?? 0) + 1);
          }
          for (const n of perHost.values()) expect(n).toBeLessThanOrEqual(max);
        };
        for (const st of steps) {
          if (st.kind === 'create') state.createServer(input({ zone: st.zone, group: g }));
          if (st.kind === 'delete') {
            const live = state.servers().filter((s) => state.status(s) !== 'DELETED');
            if (live.length > 0) state.deleteServer(live[st.pick % live.length]);
          }
          if (st.kind === 'wait') at((t += st.ms));
          check();
        }
        at(t + 10_000);
        check();
      }),
      { numRuns: 200 },
    );
  });
});
