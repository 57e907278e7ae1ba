import { errorMessage, type Logger } from '@trellis/common';
import type { NovaPort, Server } from '@trellis/nova';
import { NodeEntity, inTransaction, row } from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import { mapLimit } from '../map-limit';
import { completeOrderIfDone } from './complete-order';

export interface BuildPollerOptions {
  workerId: string;
  pollIntervalMs: number;
  /** how long a claimed node stays with this worker before another may take it over */
  leaseSeconds: number;
  concurrency: number;
  batchSize: number;
  onOutboxWritten: () => void;
}

type Change = Partial<NodeEntity> | 'gone';

interface Observation {
  node: NodeEntity;
  change: Change;
}

const isFinal = (c: Change) => c === 'gone' || 'status' in c;

/**
 * Waits for Nova without holding any message: nodes in CREATING or DELETING are claimed from the
 * database with a lease (FOR UPDATE SKIP LOCKED), their servers are looked at, and final states
 * are written back. A worker that dies loses nothing: its leases expire and any worker resumes.
 */
export class BuildPoller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private again = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly nova: NovaPort,
    private readonly logger: Logger,
    private readonly options: BuildPollerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** look again soon (new builds were just recorded) */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick()
        .then(() => undefined)
        .catch((e) => this.logger.error('build poll failed; will try again', { error: errorMessage(e) }))
        .finally(() => {
          this.running = null;
          const more = this.again;
          this.again = false;
          this.schedule(more ? 0 : this.options.pollIntervalMs);
        });
    }, delay);
  }

  /** one round: claim due nodes, look at their servers, record what changed. Returns nodes examined. */
  async tick(now = new Date()): Promise<number> {
    const claimed = await this.claim(now);
    if (!claimed.length) return 0;
    const observations = await mapLimit(claimed, this.options.concurrency, (node) => this.observe(node, new Date()));
    const finished = new Set<string>();
    await inTransaction(this.dataSource, async (m) => {
      for (const o of observations) {
        await this.record(m, o, now);
        if (o.node.action_id && isFinal(o.change)) finished.add(o.node.action_id);
      }
      for (const actionId of finished) await completeOrderIfDone(m, actionId, now);
    });
    if (finished.size) this.options.onOutboxWritten();
    return claimed.length;
  }

  private async claim(now: Date): Promise<NodeEntity[]> {
    const until = new Date(now.getTime() + this.options.leaseSeconds * 1000);
    return inTransaction(this.dataSource, async (m) => {
      const due = await m
        .getRepository(NodeEntity)
        .createQueryBuilder('n')
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .where('n.status IN (:...statuses)', { statuses: ['CREATING', 'DELETING'] })
        .andWhere('(n.lease_expires_at IS NULL OR n.lease_expires_at < :now)', { now })
        .orderBy('n.updated_at', 'ASC')
        .limit(this.options.batchSize)
        .getMany();
      if (due.length) {
        await m
          .getRepository(NodeEntity)
          .createQueryBuilder()
          .update()
          .set({ lease_owner: this.options.workerId, lease_expires_at: until })
          .whereInIds(due.map((n) => n.id))
          .execute();
      }
      return due;
    });
  }

  private async observe(node: NodeEntity, now: Date): Promise<Observation> {
    try {
      const server = node.physical_id ? await this.nova.getServer(node.physical_id) : null;
      const change = node.status === 'CREATING' ? this.buildChange(node, server, now) : this.deleteChange(node, server, now);
      return { node, change: change ?? this.lookAgain(now) };
    } catch (e) {
      this.logger.warn('could not look at a server; will look again', {
        node_id: node.id,
        server_id: node.physical_id,
        error: errorMessage(e),
      });
      return { node, change: this.lookAgain(now) };
    }
  }

  /** not final yet: hand the node back, due again after one poll interval */
  private lookAgain(now: Date): Partial<NodeEntity> {
    return { lease_owner: null, lease_expires_at: new Date(now.getTime() + this.options.pollIntervalMs) };
  }

  private buildChange(node: NodeEntity, server: Server | null, now: Date): Partial<NodeEntity> | null {
    const placement = { ...((node.data.placement as Record<string, unknown>) ?? {}) };
    if (!server) {
      return {
        status: 'ERROR',
        status_reason: `Server ${node.physical_id} of node ${node.name} disappeared from Nova while it was being built.`,
      };
    }
    if (server.status === 'ACTIVE') {
      // Senlin fills placement.zone only if the policy did not set one; Trellis records the zone
      // the server really got, so the next zone plan counts it where it is (decision 1).
      if (server.availabilityZone) placement.zone = server.availabilityZone;
      placement.host = server.host ?? server.hostId ?? null;
      return { status: 'ACTIVE', status_reason: 'Creation succeeded', data: { ...node.data, placement }, created_at: now };
    }
    if (server.status === 'ERROR') {
      const fault = server.fault?.message ?? 'the server went to ERROR without a fault message';
      return { status: 'ERROR', status_reason: `Failed in creating server ${server.id} for node ${node.name}: ${fault}` };
    }
    if (node.build_deadline && node.build_deadline.getTime() < now.getTime()) {
      return {
        status: 'ERROR',
        status_reason: `Server ${server.id} of node ${node.name} did not become ACTIVE before the build timeout (still ${server.status}).`,
      };
    }
    return null;
  }

  /**
   * A server being deleted is followed until Nova no longer has it. Its status says little on the
   * way: a server that failed to build keeps ERROR and its old fault while Nova deletes it (seen on
   * the real Nova), so only the deadline turns a delete that never completes into a failure.
   */
  private deleteChange(node: NodeEntity, server: Server | null, now: Date): Partial<NodeEntity> | 'gone' | null {
    if (!server || server.status === 'DELETED') return 'gone';
    if (node.build_deadline && node.build_deadline.getTime() < now.getTime()) {
      const fault = server.fault ? `: ${server.fault.message}` : '';
      return {
        status: 'ERROR',
        status_reason: `Server ${server.id} of node ${node.name} was not deleted before the timeout (still ${server.status}${fault}).`,
      };
    }
    return null;
  }

  private async record(m: EntityManager, o: Observation, now: Date): Promise<void> {
    const repo = m.getRepository(NodeEntity);
    if (o.change === 'gone') {
      await repo.delete({ id: o.node.id });
      return;
    }
    const final = isFinal(o.change);
    await repo.update(
      { id: o.node.id },
      row<NodeEntity>(final ? { ...o.change, updated_at: now, lease_owner: null, lease_expires_at: null } : o.change),
    );
  }
}
