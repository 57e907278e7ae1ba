import { silentLogger, type Logger } from '@trellis/common';
import { observeCloudFacts, scrapeMetrics } from '@trellis/observability';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import type { DataSource } from 'typeorm';
import { hostIdOf, type NovaAccess } from '../identity/nova-access';
import { FactsRefresher } from './facts-refresher';

/**
 * The interval refresh while PostgreSQL is away (the fault suite's `pg_ctl stop -m immediate`): a
 * round that cannot store its facts used to reject with nobody listening, and Node ended the
 * nova-worker on the unhandled rejection. Now the round is logged and the next one stores the facts.
 */
describe('FactsRefresher on an interval while the database is down', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('logs a failed round, keeps the process up, and stores the facts once the database answers', async () => {
    let databaseUp = true;
    const stored: string[] = [];
    const dataSource = {
      query: jest.fn(async (sql: string, params?: unknown[]) => {
        if (!databaseUp) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        if (sql.startsWith('INSERT INTO cloud_facts')) stored.push(String(params?.[0]));
        return [];
      }),
    } as unknown as DataSource;
    const access = {
      cloud: { listAvailabilityZones: async () => [{ name: 'az1', available: true, hosts: ['host-1'] }], listHypervisors: async () => [] },
    } as unknown as NovaAccess;
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg: string) => void warnings.push(msg) };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    const refresher = new FactsRefresher(dataSource, access, logger, 15);
    try {
      await refresher.start();
      stored.length = 0;

      databaseUp = false;
      await jest.advanceTimersByTimeAsync(15_000);
      // an unhandled rejection is reported on a later turn of the event loop
      await new Promise((r) => jest.requireActual<typeof import('node:timers')>('node:timers').setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(warnings).toContain('facts refresh failed; the next round tries again');

      databaseUp = true;
      await jest.advanceTimersByTimeAsync(15_000);
      expect(stored).toEqual(expect.arrayContaining(['availability_zones', 'hypervisors']));
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await refresher.stop();
    }
  });
});

describe('FactsRefresher.hostOf: a member sees a per-project hostId, turned back into the host by the cloud-wide facts', () => {
  it('names the host of each project\'s hostId, follows the hosts the facts name after a refresh, and keeps an unknown hostId', async () => {
    let hosts = ['host-1', 'host-2'];
    const dataSource = { query: jest.fn(async () => []) } as unknown as DataSource;
    const access = {
      cloud: {
        listAvailabilityZones: async () => [{ name: 'az1', available: true, hosts }],
        listHypervisors: async () => [],
      },
    } as unknown as NovaAccess;
    const refresher = new FactsRefresher(dataSource, access, silentLogger, 3600);
    await refresher.refresh();
    const seen = (project: string, host: string) => refresher.hostOf(project, { host: null, hostId: hostIdOf(project, host) } as never);

    expect([seen('p1', 'host-1'), seen('p1', 'host-2'), seen('p2', 'host-2')]).toEqual(['host-1', 'host-2', 'host-2']);
    // another project's hostId of the same host is not this project's
    expect(refresher.hostOf('p1', { host: null, hostId: hostIdOf('p2', 'host-1') } as never)).toBe(hostIdOf('p2', 'host-1'));
    // an admin's view names the host itself; before placement there is none
    expect(refresher.hostOf('p1', { host: 'host-9', hostId: 'x' } as never)).toBe('host-9');
    expect(refresher.hostOf('p1', { host: null, hostId: null } as never)).toBeNull();

    // a host the cloud gained: not known until the facts are read again, then named
    expect(seen('p1', 'host-3')).toBe(hostIdOf('p1', 'host-3'));
    hosts = ['host-1', 'host-2', 'host-3'];
    await refresher.refresh();
    expect([seen('p1', 'host-3'), seen('p1', 'host-1')]).toEqual(['host-3', 'host-1']);
  });
});

describe('FactsRefresher: a fact is written only when it changed', () => {
  let db: Database;
  beforeAll(async () => (db = await openTestDatabase()));
  afterAll(async () => db?.close());

  it('leaves an unchanged row alone (same row version and fetched_at), and writes a changed one or an error', async () => {
    let hosts = ['host-1', 'host-2'];
    let hypervisorsFail = false;
    const access = {
      cloud: {
        listAvailabilityZones: async () => [{ name: 'az1', available: true, hosts }],
        listHypervisors: async () => {
          if (hypervisorsFail) throw new Error('Nova answered 503');
          return hosts.map((h, i) => ({ id: String(i), hypervisorHostname: h, serviceHost: h, state: 'up', status: 'enabled' }));
        },
      },
    } as unknown as NovaAccess;
    const refresher = new FactsRefresher(db.dataSource, access, silentLogger, 3600);
    const rows = async () =>
      Object.fromEntries(
        ((await db.dataSource.query(`SELECT kind, xmin::text AS version, fetched_at, data FROM cloud_facts WHERE project = '' ORDER BY kind`)) as Array<{
          kind: string;
          version: string;
          fetched_at: Date;
          data: { items: unknown[]; error?: string };
        }>).map((r) => [r.kind, r]),
      );

    await refresher.refresh();
    const first = await rows();
    expect(Object.keys(first)).toEqual(['availability_zones', 'host_zones', 'hypervisors']);
    await new Promise((r) => setTimeout(r, 5));
    await refresher.refresh();
    expect(await rows()).toEqual(first);

    // a host more: the two kinds that name hosts are written, the zone list is not
    hosts = ['host-1', 'host-2', 'host-3'];
    await new Promise((r) => setTimeout(r, 5));
    await refresher.refresh();
    const second = await rows();
    expect(second.availability_zones).toEqual(first.availability_zones);
    for (const kind of ['host_zones', 'hypervisors']) {
      expect(second[kind].version).not.toBe(first[kind].version);
      expect(second[kind].fetched_at.getTime()).toBeGreaterThan(first[kind].fetched_at.getTime());
    }
    expect(second.hypervisors.data.items).toHaveLength(3);

    // a kind that cannot be read is stored with its error, and read again once Nova answers
    hypervisorsFail = true;
    await refresher.refresh();
    expect((await rows()).hypervisors.data).toEqual({ items: [], error: 'Nova answered 503' });
    hypervisorsFail = false;
    await refresher.refresh();
    expect((await rows()).hypervisors.data.items).toHaveLength(3);
  });
});

describe('FactsRefresher: how old the cloud-wide facts are (trellis_cloud_facts_age_seconds)', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-12-06T12:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('counts from the last read that was stored, and from the start while there was none', async () => {
    let novaDown = false;
    let databaseUp = true;
    const dataSource = {
      query: jest.fn(async () => {
        if (!databaseUp) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return [];
      }),
    } as unknown as DataSource;
    const fail = <T>(value: T) => async () => {
      if (novaDown) throw new Error('Nova answered 503');
      return value;
    };
    const access = {
      cloud: { listAvailabilityZones: fail([{ name: 'az1', available: true, hosts: ['host-1'] }]), listHypervisors: fail([]) },
    } as unknown as NovaAccess;
    const refresher = new FactsRefresher(dataSource, access, silentLogger, 3600);
    const metrics = observeCloudFacts(() => refresher.factAges());
    try {
      novaDown = true;
      await refresher.refresh();
      jest.advanceTimersByTime(30_000);
      // never read: as old as the refresher
      expect(refresher.factAges()).toEqual({ availability_zones: 30, hypervisors: 30, host_zones: 30 });

      novaDown = false;
      await refresher.refresh();
      jest.advanceTimersByTime(15_000);
      expect(refresher.factAges()).toEqual({ availability_zones: 15, hypervisors: 15, host_zones: 15 });
      const scraped = (await scrapeMetrics()).text;
      expect(scraped).toContain('trellis_cloud_facts_age_seconds{kind="hypervisors"} 15');

      // read from Nova but not stored: the policies still decide on the older facts
      databaseUp = false;
      await refresher.refresh().catch(() => undefined);
      jest.advanceTimersByTime(15_000);
      expect(refresher.factAges().hypervisors).toBe(30);
    } finally {
      metrics();
    }
    expect((await scrapeMetrics()).text).not.toContain('trellis_cloud_facts_age_seconds{');
  });
});

describe('FactsRefresher.refreshCloudWide: the cloud-wide facts no older than the caller asks', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  /** a cloud that counts its list calls; `hold` keeps the next hypervisor list waiting until released */
  function countingCloud() {
    const calls = { zones: 0, hypervisors: 0 };
    let release: (() => void) | null = null;
    let hold = false;
    let fail = false;
    const access = {
      cloud: {
        listAvailabilityZones: async () => {
          calls.zones++;
          return [{ name: 'az1', available: true, hosts: ['host-1'] }];
        },
        listHypervisors: async () => {
          calls.hypervisors++;
          if (hold) await new Promise<void>((r) => (release = r));
          if (fail) throw new Error('Nova answered 503');
          return [];
        },
      },
    } as unknown as NovaAccess;
    const dataSource = { query: jest.fn(async () => []) } as unknown as DataSource;
    return {
      refresher: new FactsRefresher(dataSource, access, silentLogger, 15),
      calls,
      holdNext: () => (hold = true),
      release: () => {
        hold = false;
        release?.();
      },
      failing: (f: boolean) => (fail = f),
    };
  }

  it('reads nothing while the last read is recent enough, and reads again once it is older', async () => {
    const { refresher, calls } = countingCloud();
    await refresher.refresh();
    expect(calls).toEqual({ zones: 2, hypervisors: 1 });

    await jest.advanceTimersByTimeAsync(10_000);
    await refresher.refreshCloudWide(15_000);
    expect(calls).toEqual({ zones: 2, hypervisors: 1 });

    await jest.advanceTimersByTimeAsync(6_000);
    await refresher.refreshCloudWide(15_000);
    expect(calls).toEqual({ zones: 4, hypervisors: 2 });
  });

  it('with 0 reads again however recent the last read, and waits out a read that began before it', async () => {
    const cloud = countingCloud();
    await cloud.refresher.refresh();
    await cloud.refresher.refreshCloudWide(0);
    expect(cloud.calls).toEqual({ zones: 4, hypervisors: 2 });

    // a round under way asked Nova before this call: its answer is not enough ...
    const duringARound = async (maxAgeMs: number) => {
      cloud.holdNext();
      const round = cloud.refresher.refresh();
      await jest.advanceTimersByTimeAsync(1);
      const asked = cloud.refresher.refreshCloudWide(maxAgeMs);
      cloud.release();
      await Promise.all([round, asked]);
    };
    await duringARound(0);
    expect(cloud.calls).toEqual({ zones: 8, hypervisors: 4 });
    // ... while one that is recent enough joins it
    await duringARound(15_000);
    expect(cloud.calls).toEqual({ zones: 10, hypervisors: 5 });
  });

  it('reads a kind again whose last read failed, however recent', async () => {
    const cloud = countingCloud();
    cloud.failing(true);
    await cloud.refresher.refresh();
    await cloud.refresher.refreshCloudWide(15_000);
    expect(cloud.calls.hypervisors).toBe(2);
    cloud.failing(false);
    await cloud.refresher.refreshCloudWide(15_000);
    await cloud.refresher.refreshCloudWide(15_000);
    expect(cloud.calls.hypervisors).toBe(3);
  });
});
