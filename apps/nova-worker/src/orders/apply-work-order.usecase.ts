import type { WorkOrderMessage, ServerCreateDto } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import { TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, type NovaPort, type Server } from '@trellis/nova';
import { WorkOrderEntity, inTransaction } from '@trellis/persistence';
import { changedRows } from '@trellis/persistence/sql';
import type { DataSource, EntityManager } from 'typeorm';
import { bootWaves, waitUntilPlaced } from './affinity-seeds';
import { buildServerRequest } from './server-request';
import { NODE_STATE, ORDER_STATE, completeOrderIfDone, type NodeState, type OrderState } from '../builds/complete-order';
import { mapLimit } from '../map-limit';
import { isPermanent, type NovaAccess } from '../identity/nova-access';

export interface ApplyResult {
  /** false when the order had been applied before (a redelivery): nothing was done again */
  applied: boolean;
  created: number;
  reused: number;
  failed: number;
  deleting: number;
}

/**
 * Applies one work order to Nova: server groups first, then servers, then deletions. Every step is
 * idempotent, so a redelivered order (the worker died before acking) finds what it made last time
 * instead of making it again: groups by name (in the order's project only), servers by the node tag
 * in their metadata.
 *
 * Every call is made as the project that asked, with the Keystone trust of the order's user
 * (NovaAccess.asOwner): Nova's own rules and quotas apply. A trust that is missing or refused fails
 * the whole order at once, as does any other permanent refusal before a server is asked for.
 *
 * The message is acked as soon as Nova accepted the requests and the nodes are recorded as
 * CREATING/DELETING; waiting for ACTIVE is the build poller's job, driven by the database.
 */
export class ApplyWorkOrderUseCase {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: NovaAccess,
    private readonly logger: Logger,
    private readonly options: {
      concurrency: number;
      leaseSeconds: number;
      /** how often to look whether the first server of a new affinity group has its host (default 500) */
      pollIntervalMs?: number;
    },
  ) {}

  async execute(order: WorkOrderMessage, delivery: { redelivered: boolean } = { redelivered: false }): Promise<ApplyResult> {
    const log = this.logger.child({ action_id: order.action_id, correlation_id: order.correlation_id });
    const claim = await this.claim(order, delivery.redelivered);
    if (claim !== 'first' && claim !== 'taken-over') {
      if (claim === 'DONE') {
        // The engine asks again for an order this worker finished: its result never arrived.
        await inTransaction(this.dataSource, (m) => completeOrderIfDone(m, order.action_id, new Date(), { again: true }));
      }
      log.info('work order already taken; acknowledging the duplicate', { state: claim });
      return { applied: false, created: 0, reused: 0, failed: 0, deleting: 0 };
    }

    let nova: NovaPort;
    let groups: Record<string, string>;
    let known: Map<string, Server>;
    try {
      nova = await this.access.asOwner({ project: order.project, user: order.user }, { verify: true });
      groups = await this.ensureGroups(nova, order, log);
      // Nova cannot filter servers by metadata, so looking for this order's servers lists every server
      // of the project: only a delivery that takes an order over can find any (BENCHMARKS.md, pipeline).
      known = claim === 'taken-over' ? await this.serversOf(nova, order.action_id) : new Map<string, Server>();
    } catch (e) {
      if (!isPermanent(e)) throw e;
      return this.failOrder(order, errorMessage(e), log);
    }
    const resolveGroup = (ref: string) => groups[ref] ?? ref;
    let created = 0;
    let reused = 0;
    const createOne = async (create: ServerCreateDto) => {
      const found = known.get(create.node_id);
      if (found) {
        reused++;
        return { create, serverId: found.id, error: null as string | null };
      }
      try {
        const request = buildServerRequest(create, { clusterId: order.cluster_id, actionId: order.action_id }, resolveGroup);
        const { id } = await nova.createServer(request);
        created++;
        return { create, serverId: id, error: null };
      } catch (e) {
        if (isTransient(e)) throw e;
        return { create, serverId: null, error: `Nova refused to create the server for node ${create.name}: ${errorMessage(e)}` };
      }
    };
    // servers of a hard (anti-)affinity group that would race in Nova's scheduler go in waves (affinity-seeds.ts),
    // all waiting bounded by half the order's claim, so that no other delivery takes the order over meanwhile
    const waves = await bootWaves(order.create_servers, resolveGroup, nova);
    const waitUntil = Date.now() + Math.min(order.build_timeout, this.options.leaseSeconds / 2) * 1000;
    const pollMs = this.options.pollIntervalMs ?? 500;
    const outcomes: Array<Awaited<ReturnType<typeof createOne>>> = [];
    for (const [i, wave] of waves.entries()) {
      const booted = await mapLimit(wave, this.options.concurrency, createOne);
      outcomes.push(...booted);
      if (i === waves.length - 1) continue;
      await Promise.all(
        booted.map(async (o) => {
          if (!o.serverId || !o.create.placement.servergroup) return;
          const timeoutMs = Math.max(0, waitUntil - Date.now());
          if (!(await waitUntilPlaced(nova, o.serverId, { pollMs, timeoutMs }))) {
            log.warn('a server of a server group got no host in time; booting the next ones anyway', { server_id: o.serverId });
          }
        }),
      );
    }

    const refused = new Map<string, string>();
    for (const del of order.delete_servers) {
      if (!del.destroy || !del.physical_id) continue;
      try {
        await nova.deleteServer(del.physical_id);
      } catch (e) {
        if (!isPermanent(e) && isTransient(e)) throw e;
        refused.set(del.node_id, `Nova refused to delete server ${del.physical_id}: ${errorMessage(e)}`);
      }
    }
    // a group is deleted only by the id its binding recorded, in the order's own project
    for (const g of order.delete_groups) {
      try {
        await nova.deleteServerGroup(g.id);
      } catch (e) {
        if (!isPermanent(e) && isTransient(e)) throw e;
        log.warn('server group not deleted', { group_id: g.id, error: errorMessage(e) });
      }
    }

    const now = new Date();
    const deadline = new Date(now.getTime() + order.build_timeout * 1000);
    await inTransaction(this.dataSource, async (m) => {
      // the UPDATE locks the order's row, as completeOrderIfDone needs, and returns what it reads
      const [locked] = changedRows<OrderState>(
        await m.query(`UPDATE work_orders SET status = 'BUILDING', groups = $2, updated_at = $3 WHERE action_id = $1 RETURNING ${ORDER_STATE}`, [
          order.action_id,
          JSON.stringify(groups),
          now,
        ]),
      );
      const written: NodeState[] = [];
      for (const o of outcomes) written.push(await this.recordCreate(m, o.create, o.serverId, o.error, resolveGroup, deadline, now));
      written.push(...(await this.recordDeletes(m, order, now, deadline, refused)));
      // with the rows just written, the usual answer (servers still building) costs no statement
      await completeOrderIfDone(m, order.action_id, now, { order: locked, written });
    });
    const failed = outcomes.filter((o) => o.error).length;
    log.info('work order applied', { created, reused, failed, deleting: order.delete_servers.length });
    return { applied: true, created, reused, failed, deleting: order.delete_servers.length };
  }

  /**
   * Takes the order before touching Nova, so two deliveries of it (a replay while the first is
   * still being applied) never both create servers. A redelivery of the message this worker's
   * predecessor held, or an order left APPLYING longer than a lease, is taken over: the lookups by
   * name and by node tag below make applying it again safe.
   */
  private async claim(order: WorkOrderMessage, redelivered: boolean): Promise<'first' | 'taken-over' | string> {
    // A first delivery, the usual case, is this one statement; it needs no transaction around it.
    const inserted: unknown[] = await this.dataSource.query(
      `INSERT INTO work_orders (action_id, cluster_id, payload, status, groups, created_at, updated_at)
       VALUES ($1, $2, $3, 'APPLYING', '{}'::jsonb, $4, $4)
       ON CONFLICT (action_id) DO NOTHING RETURNING action_id`,
      [order.action_id, order.cluster_id, JSON.stringify(order), new Date()],
    );
    if (inserted.length > 0) return 'first';
    return inTransaction(this.dataSource, async (m) => {
      const repo = m.getRepository(WorkOrderEntity);
      const now = new Date();
      const row = await repo
        .createQueryBuilder('o')
        .setLock('pessimistic_write')
        .where('o.action_id = :id', { id: order.action_id })
        .getOneOrFail();
      const stale = (row.updated_at ?? row.created_at).getTime() < now.getTime() - this.options.leaseSeconds * 1000;
      if (row.status !== 'APPLYING' || !(redelivered || stale)) return row.status;
      await repo.update({ action_id: order.action_id }, { updated_at: now });
      return 'taken-over';
    });
  }

  /**
   * Ends an order that cannot be applied at all (its trust is missing or refused, or Nova refused a
   * server group for good): every node of it fails with the reason, and the result goes to the
   * engine in the same transaction, so the action fails at once instead of being retried.
   */
  private async failOrder(order: WorkOrderMessage, reason: string, log: Logger): Promise<ApplyResult> {
    const now = new Date();
    await inTransaction(this.dataSource, async (m) => {
      const [locked] = changedRows<OrderState>(
        await m.query(`UPDATE work_orders SET status = 'BUILDING', updated_at = $2 WHERE action_id = $1 RETURNING ${ORDER_STATE}`, [order.action_id, now]),
      );
      const ids = [...order.create_servers.map((c) => c.node_id), ...order.delete_servers.map((d) => d.node_id)];
      const written = changedRows<NodeState>(
        await m.query(
          `UPDATE nodes SET status = 'ERROR', status_reason = $2, lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
           WHERE id = ANY($1) RETURNING ${NODE_STATE}`,
          [ids, reason, now],
        ),
      );
      await completeOrderIfDone(m, order.action_id, now, { order: locked, written });
    });
    log.warn('work order failed before anything was asked of Nova', { reason });
    return { applied: true, created: 0, reused: 0, failed: order.create_servers.length + order.delete_servers.length, deleting: 0 };
  }

  private async ensureGroups(nova: NovaPort, order: WorkOrderMessage, log: Logger): Promise<Record<string, string>> {
    const ids: Record<string, string> = {};
    for (const g of order.create_groups) {
      // by name inside the order's project only: the trust's token sees no other project's groups
      const found = await nova.findServerGroup(g.name);
      if (found && found.policy === g.policy) {
        ids[g.ref] = found.id;
        continue;
      }
      const made = await nova.createServerGroup(g.name, g.policy as never, g.rules);
      log.info('server group created', { name: g.name, id: made.id, policy: g.policy });
      ids[g.ref] = made.id;
    }
    return ids;
  }

  private async serversOf(nova: NovaPort, actionId: string): Promise<Map<string, Server>> {
    // one listing for the whole order instead of a lookup per node
    const servers = await nova.listServers({ metadata: { [TRELLIS_ACTION_KEY]: actionId } });
    const byNode = new Map<string, Server>();
    for (const s of servers) {
      const node = s.metadata[TRELLIS_NODE_KEY];
      if (node && s.status !== 'DELETED') byNode.set(node, s);
    }
    return byNode;
  }

  /** The node's outcome: CREATING with its server, or ERROR with Nova's refusal. */
  private async recordCreate(
    m: EntityManager,
    create: ServerCreateDto,
    serverId: string | null,
    error: string | null,
    resolveGroup: (ref: string) => string,
    deadline: Date,
    now: Date,
  ): Promise<NodeState> {
    // data.placement gets the server group's Nova id when the order placed the node in one
    const placement = JSON.stringify(create.placement.servergroup ? { servergroup: resolveGroup(create.placement.servergroup) } : {});
    const data = `data || jsonb_build_object('placement', COALESCE(NULLIF(data->'placement', 'null'::jsonb), '{}'::jsonb) || $3::jsonb)`;
    const result: unknown = error
      ? await m.query(
          `UPDATE nodes SET status = 'ERROR', status_reason = $4, updated_at = $2, data = ${data}
           WHERE id = $1 RETURNING ${NODE_STATE}`,
          [create.node_id, now, placement, error],
        )
      : await m.query(
          `UPDATE nodes SET status = 'CREATING', status_reason = 'Creation in progress', physical_id = $4, build_deadline = $5,
             lease_owner = NULL, lease_expires_at = NULL, updated_at = $2, data = ${data}
           WHERE id = $1 RETURNING ${NODE_STATE}`,
          [create.node_id, now, placement, serverId, deadline],
        );
    const [node] = changedRows<NodeState>(result);
    if (!node) throw new Error(`node ${create.node_id} of the work order is not in the database`);
    return node;
  }

  private async recordDeletes(
    m: EntityManager,
    order: WorkOrderMessage,
    now: Date,
    deadline: Date,
    refused: ReadonlyMap<string, string>,
  ): Promise<NodeState[]> {
    const destroyed = order.delete_servers.filter((d) => d.destroy && d.physical_id && !refused.has(d.node_id)).map((d) => d.node_id);
    const kept = order.delete_servers.filter((d) => !(d.destroy && d.physical_id)).map((d) => d.node_id);
    const written: NodeState[] = [];
    for (const [nodeId, reason] of refused) {
      const result: unknown = await m.query(
        `UPDATE nodes SET status = 'ERROR', status_reason = $2, updated_at = $3 WHERE id = $1 RETURNING ${NODE_STATE}`,
        [nodeId, reason, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    if (destroyed.length) {
      const result: unknown = await m.query(
        `UPDATE nodes SET status = 'DELETING', status_reason = 'Deletion in progress', lease_owner = NULL, lease_expires_at = NULL,
           build_deadline = $2, updated_at = $3
         WHERE id = ANY($1) RETURNING ${NODE_STATE}`,
        [destroyed, deadline, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    if (kept.length) {
      // destroy_after_deletion false (or a node that never got a server): the node leaves the
      // cluster; its server, if any, keeps running as an orphan node (Senlin's NODE_LEAVE).
      const result: unknown = await m.query(
        `UPDATE nodes SET cluster_id = NULL, status_reason = 'Node left the cluster', updated_at = $2 WHERE id = ANY($1) RETURNING ${NODE_STATE}`,
        [kept, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    return written;
  }
}

/** Errors worth a redelivery: Nova or Keystone unreachable or failing after the client's own retries. */
export function isTransient(e: unknown): boolean {
  if (isPermanent(e)) return false;
  const status = (e as { status?: number })?.status;
  if (typeof status === 'number') return status >= 500 || status === 429 || status === 409;
  return true;
}
