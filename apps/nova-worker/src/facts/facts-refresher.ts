import { errorMessage, type Logger } from '@trellis/common';
import type { NovaPort } from '@trellis/nova';
import { CloudFactEntity, row } from '@trellis/persistence';
import type { DataSource } from 'typeorm';
import { CloudFactKinds as FactKinds } from '@trellis/contracts';


/**
 * Copies what the policies need to know about Nova into `cloud_facts`: availability zones (as
 * Nova's availabilityZoneInfo entries), hypervisors and server groups. Runs at start-up, on an
 * interval and after the worker changed server groups. A kind that cannot be read (hypervisors
 * need the admin role) is stored with the error, so a decision can say why it lacked the fact.
 */
export class FactsRefresher {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly nova: NovaPort,
    private readonly logger: Logger,
    private readonly intervalSeconds: number,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  refresh(): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.readAll().finally(() => {
        this.inFlight = null;
      });
    }
    return this.inFlight;
  }

  /**
   * Facts read after this call began: a refresh already in flight may have read Nova before the
   * change the caller wants to see, so it is waited out and a new one is started.
   */
  async refreshFromNow(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    await this.refresh();
  }

  private async readAll(): Promise<void> {
    const now = new Date();
    const repo = this.dataSource.getRepository(CloudFactEntity);
    const read = async (kind: string, fetch: () => Promise<unknown>) => {
      try {
        await repo.upsert(row<CloudFactEntity>({ kind, data: { items: await fetch() }, fetched_at: now }), ['kind']);
      } catch (e) {
        this.logger.warn('could not read a Nova fact', { kind, error: errorMessage(e) });
        await repo.upsert(row<CloudFactEntity>({ kind, data: { items: [], error: errorMessage(e) }, fetched_at: now }), ['kind']);
      }
    };
    await read(FactKinds.availabilityZones, async () =>
      (await this.nova.listAvailabilityZones(false)).map((z) => ({ zoneName: z.name, zoneState: { available: z.available } })),
    );
    await read(FactKinds.hypervisors, async () =>
      (await this.nova.listHypervisors()).map((h) => ({
        id: h.id,
        hypervisor_hostname: h.hypervisorHostname,
        service: { host: h.serviceHost },
        state: h.state,
        status: h.status,
      })),
    );
    await read(FactKinds.serverGroups, async () => await this.nova.listServerGroups());
  }
}
