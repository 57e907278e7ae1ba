import type { NovaPort, Server, ServerGroup } from '@trellis/nova';
import { affinitySeeds, waitUntilPlaced } from './affinity-seeds';

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

const create = (node: string, servergroup?: string) => ({ node_id: node, name: node, placement: servergroup ? { servergroup } : {} }) as never;
const resolve = (ref: string) => (ref === 'ref:new' ? 'g-new' : ref);

describe('affinitySeeds', () => {
  it('boots one server first for each hard-affinity group none of whose members has a host', async () => {
    const { nova } = fakeNova([group('g-new', 'affinity'), group('g-empty', 'affinity', ['s-failed'])], {
      's-failed': [server('s-failed', { status: 'ERROR' })],
    });
    const seeds = await affinitySeeds([create('n1', 'ref:new'), create('n2', 'ref:new'), create('n3', 'g-empty'), create('n4', 'g-empty')], resolve, nova);
    expect([...seeds]).toEqual(['n1', 'n3']);
  });

  it('boots everything at once into a group with a placed member, another policy, one server or no group', async () => {
    const { nova, calls } = fakeNova(
      [group('g-placed', 'affinity', ['s1']), group('g-anti', 'anti-affinity'), group('g-soft', 'soft-affinity'), group('g-one', 'affinity')],
      { s1: [server('s1', { hostId: 'c0ffee' })] },
    );
    const seeds = await affinitySeeds(
      [
        create('a1', 'g-placed'),
        create('a2', 'g-placed'),
        create('b1', 'g-anti'),
        create('b2', 'g-anti'),
        create('c1', 'g-soft'),
        create('c2', 'g-soft'),
        create('d1', 'g-one'),
        create('e1'),
        create('e2'),
      ],
      resolve,
      nova,
    );
    expect(seeds.size).toBe(0);
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
