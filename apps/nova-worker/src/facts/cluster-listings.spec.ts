import { TRELLIS_CLUSTER_KEY, TRELLIS_NODE_KEY, type NovaPort, type Server, type ServerListFilter } from '@trellis/nova';
import { CHANGES_SLACK_MS } from '../nova-changes';
import { ClusterListings } from './cluster-listings';

/**
 * A project's servers as Nova lists them: `updated` in whole seconds on Nova's own clock (`skewMs`
 * from the worker's), `changes-since` compared with it and showing deleted servers, the metadata
 * filter applied by the client (Nova has none).
 */
class FakeNova {
  private readonly rows = new Map<string, { server: Server; updatedAt: number }>();
  readonly lists: Array<'whole' | Date> = [];
  private next = 0;
  constructor(
    private readonly now: () => number,
    private readonly skewMs: number,
  ) {}

  private novaSeconds(): number {
    return Math.floor((this.now() + this.skewMs) / 1000) * 1000;
  }

  private touch(id: string, change: (s: Server) => void): void {
    const row = this.rows.get(id)!;
    change(row.server);
    row.updatedAt = this.novaSeconds();
    row.server.updated = new Date(row.updatedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  create(cluster: string, host: string): string {
    const id = `s-${++this.next}`;
    this.rows.set(id, {
      server: { id, name: id, status: 'ACTIVE', availabilityZone: host.split('-')[0], host, hostId: `hid-${host}`, metadata: { [TRELLIS_CLUSTER_KEY]: cluster, [TRELLIS_NODE_KEY]: `n-${id}` } } as unknown as Server,
      updatedAt: 0,
    });
    this.touch(id, () => undefined);
    return id;
  }
  move(id: string, host: string): void {
    this.touch(id, (s) => Object.assign(s, { host, hostId: `hid-${host}`, availabilityZone: host.split('-')[0] }));
  }
  remove(id: string): void {
    this.touch(id, (s) => (s.status = 'DELETED'));
  }
  retag(id: string, cluster: string | undefined): void {
    this.touch(id, (s) => {
      s.metadata = { ...s.metadata };
      if (cluster === undefined) delete s.metadata[TRELLIS_CLUSTER_KEY];
      else s.metadata[TRELLIS_CLUSTER_KEY] = cluster;
    });
  }
  ids(): string[] {
    return [...this.rows.keys()];
  }
  /** what a whole list of the cluster shows now: id → host */
  truth(cluster: string): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const { server } of this.rows.values()) if (server.status !== 'DELETED' && server.metadata[TRELLIS_CLUSTER_KEY] === cluster) out[server.id] = server.host;
    return out;
  }

  port(): NovaPort {
    return {
      listServers: async (filter: ServerListFilter = {}) => {
        this.lists.push(filter.changesSince ?? 'whole');
        const since = filter.changesSince?.getTime();
        const rows = [...this.rows.values()].filter((r) => (since === undefined ? r.server.status !== 'DELETED' : r.updatedAt >= since));
        const wanted = Object.entries(filter.metadata ?? {});
        return rows.map((r) => structuredClone(r.server)).filter((s) => wanted.every(([k, v]) => s.metadata[k] === v));
      },
    } as unknown as NovaPort;
  }
}

const hosts = (servers: Array<{ id: string; host: string | null }>) => Object.fromEntries(servers.map((s) => [s.id, s.host]).sort());

describe('ClusterListings: a cluster\'s servers between surveys, from what changed', () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => (clock = Date.parse('2026-12-07T03:00:00.250Z')));

  it('lists whole first, then what changed since on Nova\'s clock: moves, deletes, new servers, metadata taken away', async () => {
    const nova = new FakeNova(now, -90_000);
    const listings = new ClusterListings(300_000, now);
    const [a, b, c] = [nova.create('c1', 'az1-h1'), nova.create('c1', 'az1-h2'), nova.create('c1', 'az2-h1')];
    nova.create('c2', 'az1-h1');

    clock += 2_000;
    const first = await listings.servers(nova.port(), 'c1', false);
    expect(first.whole).toBe(true);
    expect(hosts(first.servers)).toEqual(nova.truth('c1'));

    clock += 3_000;
    nova.move(a, 'az2-h9');
    nova.remove(b);
    nova.retag(c, undefined);
    const d = nova.create('c1', 'az1-h7');
    nova.create('c2', 'az1-h8');
    clock += 1_000;
    const second = await listings.servers(nova.port(), 'c1', false);
    expect(second.whole).toBe(false);
    expect(hosts(second.servers)).toEqual({ [a]: 'az2-h9', [d]: 'az1-h7' });
    // asked from no later than the first list's time on Nova's clock (90 s behind the worker's) less
    // the slack, and not from much earlier: the newest update that list showed, less the slack
    const asked = (nova.lists[1] as Date).getTime();
    expect(asked).toBeLessThanOrEqual(Date.parse('2026-12-07T03:00:02.250Z') - 90_000 - CHANGES_SLACK_MS);
    expect(asked).toBe(Date.parse('2026-12-07T02:58:30Z') - CHANGES_SLACK_MS);
  });

  it('lists whole when asked (check, repair), once a whole list is due, and while no server told Nova\'s clock', async () => {
    const nova = new FakeNova(now, 0);
    const listings = new ClusterListings(300_000, now);
    // an empty cluster: nothing tells Nova's clock, so the next look is whole too
    await listings.servers(nova.port(), 'c1', false);
    nova.create('c1', 'az1-h1');
    clock += 1_000;
    await listings.servers(nova.port(), 'c1', false);
    clock += 1_000;
    await listings.servers(nova.port(), 'c1', false);
    await listings.servers(nova.port(), 'c1', true);
    clock += 300_000;
    await listings.servers(nova.port(), 'c1', false);
    expect(nova.lists.map((l) => (l === 'whole' ? 'whole' : 'changes'))).toEqual(['whole', 'whole', 'changes', 'whole', 'whole']);
    expect(listings.size).toBe(1);
  });

  it('keeps at most the servers it may, dropping the listings looked at longest ago, never the current one', async () => {
    const nova = new FakeNova(now, 0);
    const listings = new ClusterListings(300_000, now, 5);
    for (const c of ['c1', 'c1', 'c2', 'c2', 'c3', 'c3', 'c3', 'c3', 'c3', 'c3']) nova.create(c, 'az1-h1');
    const kinds = () => nova.lists.map((l) => (l === 'whole' ? 'whole' : 'changes'));
    clock += 1_000;
    await listings.servers(nova.port(), 'c1', false);
    await listings.servers(nova.port(), 'c2', false);
    await listings.servers(nova.port(), 'c1', false);
    expect(listings.size).toBe(2);
    // c3 alone is over the limit: kept, every other dropped
    await listings.servers(nova.port(), 'c3', false);
    expect(listings.size).toBe(1);
    await listings.servers(nova.port(), 'c2', false);
    await listings.servers(nova.port(), 'c3', false);
    expect(kinds()).toEqual(['whole', 'whole', 'changes', 'whole', 'whole', 'whole']);
  });

  it('keeps nothing of a list that failed, and takes surveys of one cluster in turn', async () => {
    const nova = new FakeNova(now, 0);
    const listings = new ClusterListings(300_000, now);
    nova.create('c1', 'az1-h1');
    const failing = { listServers: async () => Promise.reject(new Error('Nova answered 503')) } as unknown as NovaPort;
    await expect(listings.servers(failing, 'c1', false)).rejects.toThrow('503');
    await listings.servers(nova.port(), 'c1', false);
    expect(nova.lists).toEqual(['whole']);

    const order: string[] = [];
    const slow = nova.port();
    const slowPort = {
      listServers: async (f: ServerListFilter) => {
        order.push('slow start');
        await new Promise((r) => setTimeout(r, 20));
        order.push('slow end');
        return slow.listServers(f);
      },
    } as unknown as NovaPort;
    const fastPort = {
      listServers: async (f: ServerListFilter) => {
        order.push('fast');
        return slow.listServers(f);
      },
    } as unknown as NovaPort;
    clock += 1_000;
    await Promise.all([listings.servers(slowPort, 'c1', false), listings.servers(fastPort, 'c1', false)]);
    expect(order).toEqual(['slow start', 'slow end', 'fast']);
  });

  it.each([0, -600_000, 600_000, 3_700])('equals a whole list after any changes, Nova\'s clock %d ms from the worker\'s', async (skew) => {
    let seed = 20261207 + skew;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const nova = new FakeNova(now, skew);
    const listings = new ClusterListings(300_000, now);
    for (let i = 0; i < 20; i++) nova.create(random() < 0.7 ? 'c1' : 'c2', `az1-h${i}`);
    for (let round = 0; round < 200; round++) {
      const ids = nova.ids();
      const pick = () => ids[Math.floor(random() * ids.length)];
      for (let k = Math.floor(random() * 4); k > 0; k--) {
        const r = random();
        if (r < 0.3) nova.move(pick(), `az${1 + Math.floor(random() * 2)}-h${Math.floor(random() * 50)}`);
        else if (r < 0.5) nova.create(random() < 0.7 ? 'c1' : 'c2', `az1-h${Math.floor(random() * 50)}`);
        else if (r < 0.65) nova.remove(pick());
        else if (r < 0.8) nova.retag(pick(), random() < 0.5 ? 'c1' : undefined);
        clock += Math.floor(random() * 700);
      }
      clock += Math.floor(random() * 1_500);
      const { servers } = await listings.servers(nova.port(), 'c1', random() < 0.05);
      expect(hosts(servers)).toEqual(nova.truth('c1'));
    }
    expect(nova.lists.filter((l) => l !== 'whole').length).toBeGreaterThan(150);
  });
});
