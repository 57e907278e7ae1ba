import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { FailureStreak, type Logger } from '@trellis/common';
import { ActiveActionStatuses, ServiceBinaries } from '@trellis/contracts';
import { ServiceEntity } from './entities/service.entity';
import { changedCount, sqlTextList } from './sql';

/** How often a running component renews its row. */
export const SERVICE_REPORT_INTERVAL_MS = 10_000;
/** A row not renewed for this long belongs to a component that is `down` (Senlin's service_down_time). */
export const SERVICE_DOWN_AFTER_MS = 3 * SERVICE_REPORT_INTERVAL_MS;

/** SQL: the `services` row was renewed within `param` milliseconds (a text parameter), by the database's clock */
const renewedWithin = (param: string) => `updated_at > clock_timestamp() - (${param} || ' milliseconds')::interval`;

export interface ServiceRegistration {
  /** `trellis-policy-engine` */
  binary: string;
  /** the queue or endpoint it serves */
  topic: string;
  /**
   * the message types it consumes (routing keys), each with the schema versions it takes: a
   * policy-engine writes work orders in a version every nova-worker that is up takes
   */
  accepts?: Record<string, readonly number[]>;
}

/**
 * A running component's row in `services`: inserted at start, renewed every interval, deleted on a
 * clean stop (a process that dies leaves its row behind, shown `down`, until retention forgets it:
 * TRELLIS_RETAIN_DOWN_SERVICES_DAYS). A failed renewal is logged and tried again at the next
 * interval: the database being away for a while must not stop the component. A renewal that finds
 * the row gone (deleted by hand, or by a purge while this process was stalled past the down time)
 * inserts it again, as it was at start.
 */
export class ServiceHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  /** the renewal under way, awaited by stop() before it deletes the row (or a renewal would put it back) */
  private renewing: Promise<void> | null = null;
  private stopped = false;
  /** renewals failed in a row: the first logged, then one line every 30 s, and the recovery */
  private readonly failures: FailureStreak;

  private constructor(
    private readonly dataSource: DataSource,
    /** the row as first inserted (its `updated_at` aside) */
    private readonly row: ServiceEntity,
    private readonly logger: Logger,
  ) {
    this.failures = new FailureStreak(logger, 'service heartbeat failed; tried again at the next interval', 'service heartbeat renewed again');
  }

  get id(): string {
    return this.row.id;
  }

  static async start(dataSource: DataSource, registration: ServiceRegistration, logger: Logger, intervalMs = SERVICE_REPORT_INTERVAL_MS): Promise<ServiceHeartbeat> {
    const now = new Date();
    const row: ServiceEntity = {
      id: randomUUID(),
      binary: registration.binary,
      host: hostname(),
      topic: registration.topic,
      disabled: false,
      disabled_reason: null,
      accepts: registration.accepts ? Object.fromEntries(Object.entries(registration.accepts).map(([type, versions]) => [type, [...versions]])) : null,
      created_at: now,
      updated_at: now,
    };
    const beat = new ServiceHeartbeat(dataSource, row, logger);
    await beat.register();
    beat.timer = setInterval(() => void beat.renew(), intervalMs);
    beat.timer.unref();
    return beat;
  }

  renew(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    try {
      const renewed = changedCount(await this.dataSource.query('UPDATE services SET updated_at = clock_timestamp() WHERE id = $1', [this.id]));
      if (renewed === 0) {
        // the row went while this process ran: registered again under the same id, so that the
        // component is listed (and counted by the engines' work order versions) as before
        await this.register();
        this.logger.warn('service registration was gone; registered again', { service_id: this.id, binary: this.row.binary });
      }
      this.failures.succeeded({ service_id: this.id });
    } catch (e) {
      this.failures.failed(String(e), { service_id: this.id });
    }
  }

  /** The row as at start, renewed now (by the database's clock); the same row again if it is there. */
  private async register(): Promise<void> {
    const r = this.row;
    await this.dataSource.query(
      `INSERT INTO services (id, "binary", host, topic, disabled, disabled_reason, accepts, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp()) ON CONFLICT (id) DO UPDATE SET updated_at = clock_timestamp()`,
      [r.id, r.binary, r.host, r.topic, r.disabled, r.disabled_reason, r.accepts === null ? null : JSON.stringify(r.accepts), r.created_at],
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
    await this.dataSource.query('DELETE FROM services WHERE id = $1', [this.id]).catch(() => undefined);
  }
}

export interface ServiceView {
  id: string;
  binary: string;
  host: string;
  topic: string;
  /** `up` while the component renews its row */
  state: 'up' | 'down';
  /** `enabled` or `disabled` */
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  updated_at: Date;
}

/** Every registered component, oldest first, with its state judged by the database's clock. */
export async function listServices(m: EntityManager, downAfterMs = SERVICE_DOWN_AFTER_MS): Promise<ServiceView[]> {
  const rows: Array<Omit<ServiceEntity, 'created_at'> & { up: boolean }> = await m.query(
    `SELECT id, "binary", host, topic, disabled, disabled_reason, updated_at,
            ${renewedWithin('$1')} AS up FROM services ORDER BY created_at, id`,
    [String(downAfterMs)],
  );
  return rows.map((r) => ({
    id: r.id,
    binary: r.binary,
    host: r.host,
    topic: r.topic,
    state: r.up ? 'up' : 'down',
    status: r.disabled ? 'disabled' : 'enabled',
    disabled_reason: r.disabled_reason,
    updated_at: r.updated_at,
  }));
}

/** A component that is up, and the schema versions it takes of one message type. */
export interface ServiceAcceptance {
  id: string;
  host: string;
  /** null: the row names none for the type (a release before `services.accepts`: version 1 only) */
  versions: number[] | null;
}

/**
 * Every component of `binary` that is up (its row renewed within `downAfterMs`, by the database's
 * clock) with the schema versions of `type` it says it takes. A row that says nothing of the type,
 * or holds something other than a list of integers there, reads as null.
 */
export async function acceptedVersionsOf(
  dataSource: DataSource,
  binary: string,
  type: string,
  downAfterMs = SERVICE_DOWN_AFTER_MS,
): Promise<ServiceAcceptance[]> {
  const rows: Array<{ id: string; host: string; versions: unknown }> = await dataSource.query(
    `SELECT id, host, accepts -> $2 AS versions FROM services
      WHERE "binary" = $1 AND ${renewedWithin('$3')}
      ORDER BY created_at, id`,
    [binary, type, String(downAfterMs)],
  );
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    versions: Array.isArray(r.versions) && r.versions.every((v) => Number.isInteger(v)) ? (r.versions as number[]) : null,
  }));
}

/** What the deployment is doing, for the gauges read at each scrape (README "Operating Trellis"). */
export interface DeploymentStats {
  /** unfinished actions (READY, WAITING, RUNNING, WAITING_LIFECYCLE_COMPLETION) per status: every one listed, 0 when none */
  unfinishedActions: Record<string, number>;
  /** registered components per binary and state; Trellis's three binaries always listed (0 when none) */
  components: Array<{ binary: string; state: 'up' | 'down'; count: number }>;
}

const UNFINISHED = sqlTextList(ActiveActionStatuses);

/**
 * One statement: the unfinished actions by status (few, on the (status, lease_expires_at) index) and
 * the `services` rows by binary and state (up: renewed within `downAfterMs`, by the database's clock).
 */
export async function deploymentStats(db: DataSource | EntityManager, downAfterMs = SERVICE_DOWN_AFTER_MS): Promise<DeploymentStats> {
  const [row] = (await db.query(
    `SELECT (SELECT coalesce(json_object_agg(status, n), '{}'::json)
               FROM (SELECT status, count(*)::int AS n FROM actions WHERE status IN (${UNFINISHED}) GROUP BY status) a) AS actions,
            (SELECT coalesce(json_agg(json_build_object('binary', "binary", 'up', up, 'count', n)), '[]'::json)
               FROM (SELECT "binary", ${renewedWithin('$1')} AS up, count(*)::int AS n
                       FROM services GROUP BY 1, 2) s) AS components`,
    [String(downAfterMs)],
  )) as Array<{ actions: Record<string, number>; components: Array<{ binary: string; up: boolean; count: number }> }>;
  const { actions, components: found } = row;
  const unfinishedActions: Record<string, number> = {};
  for (const status of ActiveActionStatuses) unfinishedActions[status] = actions[status] ?? 0;
  // Trellis's binaries in both states, 0 when none; any other binary the table holds as found
  const known: readonly string[] = Object.values(ServiceBinaries);
  const countOf = (binary: string, up: boolean) => found.find((c) => c.binary === binary && c.up === up)?.count ?? 0;
  const components = [
    ...known.flatMap((binary) => (['up', 'down'] as const).map((state) => ({ binary, state, count: countOf(binary, state === 'up') }))),
    ...found.filter((c) => !known.includes(c.binary)).map((c) => ({ binary: c.binary, state: c.up ? ('up' as const) : ('down' as const), count: c.count })),
  ];
  return { unfinishedActions, components };
}
