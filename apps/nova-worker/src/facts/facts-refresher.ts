import { errorMessage, type Logger } from '@trellis/common';
import type { NovaPort, Server } from '@trellis/nova';
import type { DataSource } from 'typeorm';
import { CLOUD_WIDE_PROJECT, CloudFactKinds as FactKinds } from '@trellis/contracts';
import { hostIdOf, type NovaAccess, type Owner } from '../identity/nova-access';

/** `cloud_facts.project` of the cloud-wide kinds. */
const CLOUD_WIDE = CLOUD_WIDE_PROJECT;
const CLOUD_WIDE_KINDS = [FactKinds.availabilityZones, FactKinds.hypervisors, FactKinds.hostZones];

/**
 * Copies what the policies need to know about Nova into `cloud_facts`, kept apart by who may see
 * it (docs/SECURITY.md):
 * - cloud-wide, read with Trellis's service identity: availability zones, hypervisors and the
 *   host-to-zone map (project '');
 * - per project, read with a trust of that project: its server groups (project = its id). A
 *   decision reads the cloud-wide rows and its own project's, never another project's.
 * Runs at start-up and on an interval; a project's server groups also after an order changed them
 * and on a drift survey of one of its clusters, which reads the cloud-wide kinds again unless a read
 * is recent enough (refreshCloudWide). A kind that cannot be read is stored with the error, so a
 * decision can say why it lacked the fact.
 */
export class FactsRefresher {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  /** a read of the cloud-wide kinds under way (a round's, or a survey's) */
  private cloudWideInFlight: Promise<void> | null = null;
  /** every host name the cloud-wide facts name, to turn a member's hostId back into its host */
  private hosts: string[] = [];
  /**
   * Per project, each host's hostId back to its name: computed once per project for the hosts of
   * the facts (a hash per host), not once per server looked up (10,000 servers on 10,000 hosts
   * were 10^8 hashes, a minute of the build poller's; BENCHMARKS.md, scale-out). Emptied when the
   * host names change.
   */
  private hostIds = new Map<string, Map<string, string>>();
  /** when each cloud-wide kind was last read from Nova (ms), or when this refresher began */
  private readAt = new Map<string, number>();
  private readonly startedAt = Date.now();

  constructor(
    private readonly dataSource: DataSource,
    private readonly access: NovaAccess,
    private readonly logger: Logger,
    private readonly intervalSeconds: number,
  ) {}

  /** Seconds since each cloud-wide kind was last read from Nova (trellis_cloud_facts_age_seconds). */
  factAges(now = Date.now()): Record<string, number> {
    const ages: Record<string, number> = {};
    for (const kind of CLOUD_WIDE_KINDS) ages[kind] = Math.max(0, now - (this.readAt.get(kind) ?? this.startedAt)) / 1000;
    return ages;
  }

  async start(): Promise<void> {
    await this.refresh();
    // A round that cannot write (the database away) is logged and the next one tries again; left
    // unhandled, its rejection ended the process (found by the fault suite's PostgreSQL stop).
    this.timer = setInterval(
      () => void this.refresh().catch((e) => this.logger.warn('facts refresh failed; the next round tries again', { error: errorMessage(e) })),
      this.intervalSeconds * 1000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  /** cloud-wide facts, then the server groups of every project that has clusters */
  refresh(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.readAll().finally(() => {
        this.inFlight = null;
      });
    }
    return this.inFlight;
  }

  /**
   * The cloud-wide facts, read from Nova no longer than `maxAgeMs` before this call (0: after it
   * began; a read already under way may have asked Nova before the change the caller wants to see,
   * so it is waited out and another started). Facts read recently enough are not read again: at
   * 10,000 hosts the three lists take Nova (the simulator here) about 1.4 s, which a drift survey
   * before every scaling action of a role anti-affinity cluster paid again although a round had just
   * read them (BENCHMARKS.md, scale-out, "Session 20"). A kind whose last read failed is read again.
   */
  async refreshCloudWide(maxAgeMs: number): Promise<void> {
    const since = Date.now() - Math.max(0, maxAgeMs);
    const fresh = () => CLOUD_WIDE_KINDS.every((kind) => (this.readAt.get(kind) ?? Number.NEGATIVE_INFINITY) >= since);
    if (maxAgeMs > 0 && fresh()) return;
    if (this.cloudWideInFlight) {
      await this.cloudWideInFlight.catch(() => undefined);
      if (fresh()) return;
    }
    // a read started from here on asks Nova after `since`; joining one another caller started meanwhile is as good
    await this.readCloudWideOnce();
  }

  /** The server groups of one project, read as that project (after an order changed them, or on a survey). */
  async refreshProject(owner: Owner, nova?: NovaPort): Promise<void> {
    await this.store(FactKinds.serverGroups, owner.project, async () => (await (nova ?? (await this.access.asOwner(owner))).listServerGroups()));
  }

  /**
   * The host a server of a project runs on. A member sees only Nova's hostId (a per-project hash of
   * the host); the host names come from the cloud-wide facts, so the hash is turned back into the
   * name without reading the server with more rights than its owner has. Null before placement; the
   * hostId itself for a host the facts do not name.
   */
  hostOf(projectId: string, server: Pick<Server, 'host' | 'hostId'>): string | null {
    if (server.host) return server.host;
    if (!server.hostId) return null;
    let ids = this.hostIds.get(projectId);
    if (!ids) {
      ids = new Map();
      // the first host of a hostId wins, as the search through the list did
      for (const h of this.hosts) {
        const id = hostIdOf(projectId, h);
        if (!ids.has(id)) ids.set(id, h);
      }
      this.hostIds.set(projectId, ids);
    }
    return ids.get(server.hostId) ?? server.hostId;
  }

  private async readAll(): Promise<void> {
    await this.readCloudWideOnce();
    await this.readProjects();
  }

  /** one read of the cloud-wide kinds at a time: a caller that comes while one is under way joins it */
  private readCloudWideOnce(): Promise<void> {
    if (!this.cloudWideInFlight) {
      this.cloudWideInFlight = this.readCloudWide().finally(() => {
        this.cloudWideInFlight = null;
      });
    }
    return this.cloudWideInFlight;
  }

  private async readCloudWide(): Promise<void> {
    const cloud = this.access.cloud;
    await this.store(FactKinds.availabilityZones, CLOUD_WIDE, async () =>
      (await cloud.listAvailabilityZones(false)).map((z) => ({ zoneName: z.name, zoneState: { available: z.available } })),
    );
    const hypervisors = await this.store(FactKinds.hypervisors, CLOUD_WIDE, async () =>
      (await cloud.listHypervisors()).map((h) => ({
        id: h.id,
        hypervisor_hostname: h.hypervisorHostname,
        service: { host: h.serviceHost },
        state: h.state,
        status: h.status,
      })),
    );
    const zones = await this.store(FactKinds.hostZones, CLOUD_WIDE, async () =>
      (await cloud.listAvailabilityZones(true)).map((z) => ({ zoneName: z.name, hosts: z.hosts ?? [] })),
    );
    const names = new Set<string>();
    for (const h of hypervisors ?? []) {
      if (h.service.host) names.add(h.service.host);
    }
    for (const z of zones ?? []) for (const h of z.hosts) names.add(h);
    if (names.size) {
      const hosts = [...names];
      if (hosts.length !== this.hosts.length || hosts.some((h, i) => h !== this.hosts[i])) this.hostIds = new Map();
      this.hosts = hosts;
    }
  }

  /** projects with clusters, each read with the most recently confirmed trust of that project */
  private async readProjects(): Promise<void> {
    let owners: Array<{ project_id: string; user_id: string }>;
    try {
      owners = await this.dataSource.query(
        `SELECT DISTINCT ON (t.project_id) t.project_id, t.user_id FROM trusts t
          WHERE t.project_id IN (SELECT DISTINCT project FROM clusters)
          ORDER BY t.project_id, t.verified_at DESC`,
      );
    } catch (e) {
      this.logger.warn('could not list the projects to read server groups of', { error: errorMessage(e) });
      return;
    }
    for (const o of owners) {
      await this.refreshProject({ project: o.project_id, user: o.user_id }).catch((e) =>
        this.logger.warn('could not read the server groups of a project', { project_id: o.project_id, error: errorMessage(e) }),
      );
    }
  }

  /** Stores one kind's items (or the error that kept it from being read); returns the items read. */
  private async store<T>(kind: string, project: string, fetch: () => Promise<T[]>): Promise<T[] | null> {
    const now = new Date();
    let items: T[] | null = null;
    let data: Record<string, unknown>;
    try {
      items = await fetch();
      data = { items };
    } catch (e) {
      this.logger.warn('could not read a Nova fact', { kind, project_id: project || undefined, error: errorMessage(e) });
      data = { items: [], error: errorMessage(e) };
    }
    // Written only when it differs from what is stored: `fetched_at` is when these facts were first
    // read. With 10,000 hypervisors the row is 1.6 MB of JSON (0.5 MB stored), and rewriting it on
    // every round made ~0.5 MB of WAL a round (2.3 MB a minute on an idle deployment); a row left
    // alone also lets the gateways keep the host names they read from it (host-visibility.ts).
    await this.dataSource.query(
      `INSERT INTO cloud_facts (kind, project, data, fetched_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (kind, project) DO UPDATE SET data = EXCLUDED.data, fetched_at = EXCLUDED.fetched_at
       WHERE cloud_facts.data IS DISTINCT FROM EXCLUDED.data`,
      [kind, project, JSON.stringify(data), now],
    );
    // stored: what the policies decide on is as old as this read
    if (items && project === CLOUD_WIDE) this.readAt.set(kind, now.getTime());
    return items;
  }
}
