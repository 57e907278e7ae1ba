import type { NovaPort, Server, ServerGroup } from '@trellis/nova';
import { bootWaves, waitUntilPlaced } from './affinity-seeds';

const server = (id: string, over: Partial<Server> = {}): Server => ({
  id,
  name: id,
  status: 'BUILD',
  availabilityZone: null,
  host: null,
  hypervisorHostname: null,
  hostId: null,
  metadata: {},
  fault: null,
  ...over,
});

const group = (id: string, policy: ServerGroup['policy'], members: string[] = []): ServerGroup => ({ id, name: id, policy, rules: {}, members });

/** a NovaPort that knows the given groups and answers getServer from a list of snapshots per server */
function fakeNova(groups: ServerGroup[], servers: Record<string, Array<Server | null>> = {}) {
  const calls: string[] = [];
  const nova = {
    getServerGroup: async (id: string) => {
      calls.push(`group ${id}`);
      return groups.find((g) => g.id === id) ?? null;
    },
    getServer: async (id: string) => {
      calls.push(`server ${id}`);
      const seen = servers[id] ?? [];
      return seen.length > 1 ? seen.shift()! : (seen[0] ?? null);
    },
  } as unknown as NovaPort;
  return { nova, calls };
}

const create = (node: string, servergroup?: string, zone?: string) =>
  ({ node_id: node, name: node, placement: { ...(servergroup ? { servergroup } : {}), ...(zone ? { zone } : {}) } }) as never;
const ids = (waves: Array<Array<{ node_id: string }>>) => waves.map((w) => w.map((c) => c.node_id));
const resolve = (ref: string) => (ref === 'ref:new' ? 'g-new' : ref);

describe('bootWaves', () => {
  it('boots one server first for each hard-affinity group none of whose members has a host', async () => {
    const { nova } = fakeNova([group('g-new', 'affinity'), group('g-empty', 'affinity', ['s-failed'])], {
      's-failed': [server('s-failed', { status: 'ERROR' })],
    });
    const waves = await bootWaves([create('n1', 'ref:new'), create('n2', 'ref:new'), create('n3', 'g-empty'), create('n4', 'g-empty')], resolve, nova);
    expect(ids(waves)).toEqual([['n1', 'n3'], ['n2', 'n4']]);
  });

  it('boots the servers of a hard anti-affinity group one per zone per wave', async () => {
    const { nova } = fakeNova([group('g-anti', 'anti-affinity')]);
    const waves = await bootWaves(
      [create('a1', 'g-anti', 'az1'), create('b1', 'g-anti', 'az2'), create('b2', 'g-anti', 'az2'), create('b3', 'g-anti', 'az2'), create('x', undefined, 'az2')],
      resolve,
      nova,
    );
    expect(ids(waves)).toEqual([['a1', 'b1', 'x'], ['b2'], ['b3']]);
    // no zone is one zone
    expect(ids(await bootWaves([create('c1', 'g-anti'), create('c2', 'g-anti')], resolve, nova))).toEqual([['c1'], ['c2']]);
  });

  it('boots everything at once into a group with a placed member, a soft policy, one server or no group', async () => {
    const { nova, calls } = fakeNova(
      [group('g-placed', 'affinity', ['s1']), group('g-soft', 'soft-affinity'), group('g-soft-anti', 'soft-anti-affinity'), group('g-one', 'affinity')],
      { s1: [server('s1', { hostId: 'c0ffee' })] },
    );
    const all = [
      create('a1', 'g-placed'),
      create('a2', 'g-placed'),
      create('b1', 'g-soft-anti', 'az1'),
      create('b2', 'g-soft-anti', 'az1'),
      create('c1', 'g-soft'),
      create('c2', 'g-soft'),
      create('d1', 'g-one'),
      create('e1'),
      create('e2'),
    ];
    expect(ids(await bootWaves(all, resolve, nova))).toEqual([['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'd1', 'e1', 'e2']]);
    expect(calls).not.toContain('group g-one');
  });
});

describe('waitUntilPlaced', () => {
  const options = (now: { t: number }) => ({ pollMs: 100, timeoutMs: 1000, sleep: async (ms: number) => void (now.t += ms), now: () => now.t });

  it('polls until Nova shows a host (or only a hostId, for a member)', async () => {
    const { nova, calls } = fakeNova([], { s: [server('s'), server('s'), server('s', { hostId: 'abc' })] });
    await expect(waitUntilPlaced(nova, 's', options({ t: 0 }))).resolves.toBe(true);
    expect(calls).toEqual(['server s', 'server s', 'server s']);
  });

  it('gives up on a server that failed or vanished, and when the time is up', async () => {
    expect(await waitUntilPlaced(fakeNova([], { s: [server('s', { status: 'ERROR' })] }).nova, 's', options({ t: 0 }))).toBe(false);
    expect(await waitUntilPlaced(fakeNova([], {}).nova, 's', options({ t: 0 }))).toBe(false);
    const now = { t: 0 };
    const { nova, calls } = fakeNova([], { s: [server('s')] });
    expect(await waitUntilPlaced(nova, 's', options(now))).toBe(false);
    expect(now.t).toBe(1000);
    expect(calls).toHaveLength(11);
  });
});
