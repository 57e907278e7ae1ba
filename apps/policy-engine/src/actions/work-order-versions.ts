import { RoutingKeys, ServiceBinaries, WORK_ORDER_SCHEMA_VERSION, WorkOrderMessage, acceptedSchemaVersions } from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import { SERVICE_REPORT_INTERVAL_MS, acceptedVersionsOf, type ServiceAcceptance } from '@trellis/persistence';
import type { DataSource } from 'typeorm';

/**
 * The newest of the versions this engine writes (`writable`) that every nova-worker in `workers`
 * takes (a worker whose row names no versions is of a release before `services.accepts`: version 1).
 * No worker up: the newest (the first worker to come is of this release or newer, or the engine
 * learns otherwise at its next look). No version every worker takes: the oldest this engine writes,
 * which the workers that do not take it dead-letter naming schema_version.
 */
export function commonWorkOrderVersion(workers: readonly ServiceAcceptance[], writable: readonly number[] = acceptedSchemaVersions(WorkOrderMessage)): number {
  const candidates = [...writable].sort((a, b) => b - a);
  for (const v of candidates) if (workers.every((w) => (w.versions ?? [1]).includes(v))) return v;
  return candidates[candidates.length - 1];
}

export interface WorkOrderVersionSource {
  /** the schema_version to write work orders in now */
  readonly current: number;
}

/**
 * The work order version a policy-engine writes (README "Upgrading a running deployment"): the newest
 * one every nova-worker that is up takes, read from `services.accepts` when the engine starts and
 * again every `intervalMs` (the rows' own renewal interval). During a rolling upgrade that puts
 * engines of this release beside workers of the release before, the engine writes version 1 until
 * the last older worker has stopped (its row removed, or not renewed for 30 s), then version 2: the
 * services may be replaced in any order. A failed look keeps the version it had.
 */
export class WorkOrderVersions implements WorkOrderVersionSource {
  private version = WORK_ORDER_SCHEMA_VERSION;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly intervalMs = SERVICE_REPORT_INTERVAL_MS,
  ) {}

  get current(): number {
    return this.version;
  }

  /** Reads the workers' versions once, then keeps looking every interval until stop(). */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Looks at the workers that are up now (one look at a time). */
  refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => (this.reading = null));
    return this.reading;
  }

  private async read(): Promise<void> {
    let workers: ServiceAcceptance[];
    try {
      workers = await acceptedVersionsOf(this.dataSource, ServiceBinaries.novaWorker, RoutingKeys.workOrder);
    } catch (e) {
      this.logger.warn('could not read which work order versions the nova-workers take; writing the same as before', {
        schema_version: this.version,
        error: String(e),
      });
      return;
    }
    const next = commonWorkOrderVersion(workers);
    if (next === this.version) return;
    const older = workers.filter((w) => !(w.versions ?? [1]).includes(this.version));
    this.logger.info(
      next < this.version
        ? 'writing work orders in an older schema_version: a nova-worker that is up does not take the newer one (a rolling upgrade)'
        : 'writing work orders in the newer schema_version: every nova-worker that is up takes it',
      {
        schema_version: next,
        previous: this.version,
        workers_up: workers.length,
        ...(older.length ? { older_workers: older.map((w) => ({ id: w.id, host: w.host, takes: w.versions ?? [1] })) } : {}),
      },
    );
    this.version = next;
  }
}
