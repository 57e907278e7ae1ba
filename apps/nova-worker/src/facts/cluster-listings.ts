import { TRELLIS_CLUSTER_KEY, TRELLIS_NODE_KEY, type NovaPort, type Server } from '@trellis/nova';
import { changedSince, newestUpdate } from '../nova-changes';

/** What a survey reads of each server of a cluster. */
export type SurveyedServer = Pick<Server, 'id' | 'status' | 'host' | 'hostId' | 'availabilityZone' | 'metadata'>;

/** One cluster's servers as this worker last listed them. */
interface Listing {
  /** when its last list was asked for (this worker's clock) */
  at: number;
  /** when its last whole list was asked for */
  fullAt: number;
  /**
   * at most Nova's clock less this worker's (the newest `updated` seen, less the time it was seen):
   * the previous list was asked for at Nova's `at + offset` or later; NaN while no server told
   */
  offset: number;
  servers: Map<string, SurveyedServer>;
}

/**
 * Between two whole lists of a cluster's servers (every SURVEY_FULL_LIST_EVERY_MS, and for every
 * check and repair), a survey lists what changed in the project since the previous list, on Nova's
 * clock less CHANGES_SLACK_MS (`changes-since`, deleted servers included): an evacuation, a migration,
 * a delete or a metadata change each update the server's `updated_at`, so a server the changes leave
 * out is as the last list showed it. At 10,000 nodes a whole list is 10 pages of Nova's server
 * details, read before every scaling action of a role anti-affinity cluster (BENCHMARKS.md,
 * scale-out, "Session 20").
 */
export const SURVEY_FULL_LIST_EVERY_MS = 5 * 60_000;

/**
 * The most servers kept over all listings (a few hundred bytes each): past it the listings looked at
 * longest ago are dropped, and their clusters listed whole at their next survey. Two 10,000-node
 * clusters, or 200 of 100 nodes, scaled within the same few minutes stay kept.
 */
export const SURVEY_KEPT_SERVERS = 20_000;

/**
 * The servers of each cluster this worker surveyed, kept between surveys (a compact copy of each,
 * dropped with the listing once a whole list is due anyway, or to keep within SURVEY_KEPT_SERVERS).
 * Surveys of one cluster take turns: a list of changes applied after a newer one would bring back
 * what that one replaced.
 */
export class ClusterListings {
  private readonly listings = new Map<string, Listing>();
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly fullListEveryMs = SURVEY_FULL_LIST_EVERY_MS,
    private readonly clock: () => number = Date.now,
    private readonly keptServers = SURVEY_KEPT_SERVERS,
  ) {}

  /** The cluster's servers now (none deleted); `whole`: list them all, whatever is kept. */
  servers(nova: NovaPort, clusterId: string, whole: boolean): Promise<{ servers: SurveyedServer[]; whole: boolean }> {
    const turn = (this.turns.get(clusterId) ?? Promise.resolve()).catch(() => undefined).then(() => this.list(nova, clusterId, whole));
    this.turns.set(clusterId, turn);
    return turn.finally(() => {
      if (this.turns.get(clusterId) === turn) this.turns.delete(clusterId);
    });
  }

  /** clusters with a listing kept (for tests and the worker's memory figures) */
  get size(): number {
    return this.listings.size;
  }

  private async list(nova: NovaPort, clusterId: string, whole: boolean): Promise<{ servers: SurveyedServer[]; whole: boolean }> {
    const at = this.clock();
    for (const [id, listing] of this.listings) if (at - listing.fullAt >= this.fullListEveryMs) this.listings.delete(id);
    const kept = whole ? undefined : this.listings.get(clusterId);
    if (kept && Number.isFinite(kept.offset)) {
      const changed = await nova.listServers({ changesSince: new Date(changedSince(kept.at, kept.offset)) });
      const seen = newestUpdate(changed) - this.clock();
      for (const s of changed) {
        if (s.status !== 'DELETED' && s.metadata[TRELLIS_CLUSTER_KEY] === clusterId) kept.servers.set(s.id, compact(s));
        else kept.servers.delete(s.id);
      }
      kept.at = at;
      if (Number.isFinite(seen)) kept.offset = Math.max(kept.offset, seen);
      this.keepWithin(clusterId);
      return { servers: [...kept.servers.values()], whole: false };
    }
    const listed = (await nova.listServers({ metadata: { [TRELLIS_CLUSTER_KEY]: clusterId } })).filter((s) => s.status !== 'DELETED');
    const offset = newestUpdate(listed) - this.clock();
    this.listings.set(clusterId, { at, fullAt: at, offset, servers: new Map(listed.map((s) => [s.id, compact(s)])) });
    this.keepWithin(clusterId);
    return { servers: listed, whole: true };
  }

  /**
   * Moves `current`'s listing last (the map's order is the order listings were last looked at), then
   * drops those looked at longest ago until the kept servers fit; `current`'s stays, however large.
   */
  private keepWithin(current: string): void {
    const listing = this.listings.get(current);
    if (listing) {
      this.listings.delete(current);
      this.listings.set(current, listing);
    }
    let total = 0;
    for (const l of this.listings.values()) total += l.servers.size;
    for (const [id, l] of this.listings) {
      if (total <= this.keptServers || id === current) break;
      this.listings.delete(id);
      total -= l.servers.size;
    }
  }
}

function compact(s: Server): SurveyedServer {
  const node = s.metadata[TRELLIS_NODE_KEY];
  return {
    id: s.id,
    status: s.status,
    host: s.host ?? null,
    hostId: s.hostId ?? null,
    availabilityZone: s.availabilityZone ?? null,
    metadata: { [TRELLIS_CLUSTER_KEY]: s.metadata[TRELLIS_CLUSTER_KEY], ...(node === undefined ? {} : { [TRELLIS_NODE_KEY]: node }) },
  };
}
