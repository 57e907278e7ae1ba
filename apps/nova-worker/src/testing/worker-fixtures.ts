import { randomUUID } from 'node:crypto';
import { silentLogger, type Logger } from '@trellis/common';
import { RoutingKeys, WORK_ORDER_SCHEMA_VERSION, type ServerCreateDto, type WorkOrderMessage, type WorkResultMessage } from '@trellis/contracts';
import { NovaError, type CreatedServer, type NovaPort, type Server, type ServerAction, type ServerCreateRequest, type ServerGroup, type ServerListFilter } from '@trellis/nova';
import { NodeEntity, WorkOrderEntity, type Database } from '@trellis/persistence';
import { BuildPoller, type BuildPollerOptions } from '../builds/build-poller';
import { NovaAccess } from '../identity/nova-access';
import { ApplyWorkOrderUseCase } from '../orders/apply-work-order.usecase';

/** Nova as far as the worker's order and build paths use it: servers in memory, each call recorded. */
export class FakeNova implements Partial<NovaPort> {
  readonly servers = new Map<string, Server>();
  readonly created: ServerCreateRequest[] = [];
  readonly deleted: string[] = [];
  /** set to make createServer answer 400 with this message */
  refuseCreates: string | null = null;
  /**
   * set to play a create whose first answer was lost: Nova made a server, the client did not hear it,
   * found nothing yet, and its next try made a second one, which it returns as uncertain
   */
  loseFirstCreateAnswer = false;
  /** listServers calls (their metadata filter), in order */
  readonly listings: Array<Record<string, string>> = [];
  /** listServers calls by changes-since, in order: the time asked for */
  readonly changeListings: Date[] = [];
  /** getServer calls, in order */
  readonly gets: string[] = [];
  /** set to make listServers fail with this (a Nova error) */
  listFailure: Error | null = null;
  /**
   * Nova's clock (epoch ms) once set: servers booted and activated from then on carry `updated` (to
   * the second, as Nova writes it) and a changes-since list returns only those updated at or after
   * the time asked for. Unset, the list returns every server, as a Nova may return more.
   */
  clock: number | null = null;

  async createServer(request: ServerCreateRequest): Promise<CreatedServer> {
    if (this.refuseCreates) {
      throw new NovaError({ service: 'compute', status: 400, method: 'POST', path: '/servers', serviceMessage: this.refuseCreates });
    }
    if (this.loseFirstCreateAnswer) {
      this.boot(request);
      return { id: this.boot(request), uncertain: true };
    }
    return { id: this.boot(request) };
  }

  private boot(request: ServerCreateRequest): string {
    this.created.push(request);
    const id = randomUUID();
    this.servers.set(id, {
      id,
      name: request.name,
      status: 'BUILD',
      availabilityZone: null,
      host: null,
      hypervisorHostname: null,
      hostId: null,
      metadata: request.metadata ?? {},
      fault: null,
      ...this.stamp(),
    });
    return id;
  }

  async getServer(id: string): Promise<Server | null> {
    this.gets.push(id);
    return this.servers.get(id) ?? null;
  }

  /** every server for changes-since (this Nova keeps no change times: more is what a real one may give too) */
  async listServers(filter: ServerListFilter = {}): Promise<Server[]> {
    if (this.listFailure) throw this.listFailure;
    if (filter.changesSince) this.changeListings.push(filter.changesSince);
    else this.listings.push(filter.metadata ?? {});
    const wanted = Object.entries(filter.metadata ?? {});
    const since = this.clock !== null && filter.changesSince ? filter.changesSince.getTime() : null;
    const changed = (s: Server) => since === null || (s.updated !== null && s.updated !== undefined && Date.parse(s.updated) >= since);
    // what Nova showed at that moment: copies, as the client's parsed answer is
    return [...this.servers.values()].filter((s) => changed(s) && wanted.every(([k, v]) => s.metadata[k] === v)).map((s) => ({ ...s }));
  }

  async deleteServer(id: string): Promise<void> {
    this.deleted.push(id);
    const server = this.servers.get(id);
    if (server) server.status = 'DELETING';
  }

  /** server actions asked for, in order */
  readonly actions: Array<{ id: string; action: ServerAction }> = [];
  /** set to make serverAction answer 409 with this message */
  refuseActions: string | null = null;

  /** Nova accepts the action; the server settles at once (reboot/rebuild → ACTIVE, os-stop → SHUTOFF, ...) */
  async serverAction(id: string, action: ServerAction): Promise<void> {
    const server = this.servers.get(id);
    if (!server) throw new NovaError({ service: 'compute', status: 404, method: 'POST', path: `/servers/${id}/action`, serviceMessage: `Instance ${id} could not be found.` });
    if (this.refuseActions) {
      throw new NovaError({ service: 'compute', status: 409, method: 'POST', path: `/servers/${id}/action`, serviceMessage: this.refuseActions });
    }
    this.actions.push({ id, action });
    const settled: Record<string, string> = { 'os-stop': 'SHUTOFF', pause: 'PAUSED', suspend: 'SUSPENDED', rescue: 'RESCUE', resize: 'VERIFY_RESIZE' };
    if (!['lock', 'unlock', 'changePassword'].includes(action.action)) server.status = settled[action.action] ?? 'ACTIVE';
    if (action.action === 'rebuild') Object.assign(server, { imageId: action.imageRef ?? server.imageId }, action.name ? { name: action.name } : {});
    if (action.action === 'resize') {
      server.flavor = { id: null, name: action.flavorRef };
      if (this.resizeFault) Object.assign(server, { status: 'ERROR', fault: { code: 500, message: this.resizeFault } });
    }
  }

  /** set to make a resize end in ERROR with this fault */
  resizeFault: string | null = null;
  /** PUT /servers/{id} and PUT /servers/{id}/metadata calls, in order */
  readonly updates: Array<{ id: string; name?: string; metadata?: Record<string, string> }> = [];

  async updateServer(id: string, changes: { name: string }): Promise<void> {
    const server = this.servers.get(id);
    if (!server) throw new NovaError({ service: 'compute', status: 404, method: 'PUT', path: `/servers/${id}`, serviceMessage: `Instance ${id} could not be found.` });
    this.updates.push({ id, name: changes.name });
    server.name = changes.name;
  }

  async setServerMetadata(id: string, metadata: Record<string, string>): Promise<void> {
    const server = this.servers.get(id);
    if (!server) throw new NovaError({ service: 'compute', status: 404, method: 'PUT', path: `/servers/${id}/metadata`, serviceMessage: `Instance ${id} could not be found.` });
    this.updates.push({ id, metadata });
    server.metadata = { ...metadata };
  }

  readonly groups = new Map<string, ServerGroup>();

  async getServerGroup(id: string): Promise<ServerGroup | null> {
    return this.groups.get(id) ?? null;
  }

  async findServerGroup(): Promise<ServerGroup | null> {
    return null;
  }

  async createServerGroup(name: string, policy: ServerGroup['policy']): Promise<ServerGroup> {
    const group: ServerGroup = { id: randomUUID(), name, policy, rules: {}, members: [] };
    this.groups.set(group.id, group);
    return group;
  }

  /** the server Nova booted for `nodeId` becomes ACTIVE in `zone` on `host` */
  activate(nodeId: string, zone: string, host: string): Server {
    const server = [...this.servers.values()].find((s) => s.metadata.trellis_node === nodeId);
    if (!server) throw new Error(`no server for node ${nodeId}`);
    Object.assign(server, { status: 'ACTIVE', availabilityZone: zone, host }, this.stamp());
    return server;
  }

  /** `updated` as Nova writes it (whole seconds, Z), when the clock is set */
  private stamp(): { updated?: string } {
    return this.clock === null ? {} : { updated: new Date(Math.floor(this.clock / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
  }
}

/** A cluster's node row as the engine writes it before the worker gets the order. */
export async function insertNode(db: Database, over: Partial<NodeEntity> = {}): Promise<NodeEntity> {
  const node: NodeEntity = {
    id: randomUUID(),
    name: `node-${randomUUID().slice(0, 8)}`,
    cluster_id: randomUUID(),
    profile_id: randomUUID(),
    project: 'project-a',
    user: 'user-a',
    domain: null,
    physical_id: null,
    index: 1,
    role: null,
    status: 'INIT',
    status_reason: 'Initializing',
    data: { placement: { zone: 'az1' }, kept: 'by the worker' },
    metadata: {},
    tainted: false,
    init_at: new Date(),
    created_at: null,
    updated_at: new Date(),
    action_id: null,
    lease_owner: null,
    lease_expires_at: null,
    build_deadline: null,
    ...over,
  };
  await db.dataSource.getRepository(NodeEntity).insert(node as never);
  return node;
}

export function workOrder(actionId: string, over: Partial<WorkOrderMessage> = {}): WorkOrderMessage {
  return {
    message_id: randomUUID(),
    schema_version: WORK_ORDER_SCHEMA_VERSION,
    action_id: actionId,
    correlation_id: `req-${actionId}`,
    cluster_id: null,
    project: 'project-a',
    user: 'user-a',
    action: 'CLUSTER_SCALE_OUT',
    kind: 'create',
    create_groups: [],
    create_servers: [],
    delete_servers: [],
    delete_groups: [],
    build_timeout: 600,
    profile: FIXTURE_PROFILE,
    ...over,
  };
}

/**
 * Stores the action an order belongs to, RUNNING, as the gateway stored it before the engine sent
 * the order (a worker applies no order whose action is gone); nothing when the test stored one, or
 * when the order is a step's (its action_id a step's id, whose action the test stored).
 */
export async function insertActionOf(db: Database, order: WorkOrderMessage, status = 'RUNNING'): Promise<void> {
  await db.dataSource.query(
    `INSERT INTO actions (id, name, cluster_id, target, action, cause, owner, "interval", start_time, end_time, timeout, status, status_reason,
                          inputs, outputs, data, depends_on, depended_by, project, "user", domain, created_at, updated_at, attempts)
     SELECT $1, 'fixture', $2, COALESCE($2::uuid, $1::uuid), $3, 'RPC Request', NULL, -1, extract(epoch FROM now()), NULL, 3600, $4, '',
             '{}', '{}', '{}', '[]', '[]', $5, $6, NULL, now(), now(), 1
      WHERE NOT EXISTS (SELECT 1 FROM action_steps WHERE id = $1::uuid)
     ON CONFLICT (id) DO NOTHING`,
    [order.action_id, order.cluster_id, order.action, status, order.project, order.user],
  );
}

/** `apply`, storing each order's action first as the pipeline has it (insertActionOf) */
export function storingActions(db: Database, apply: ApplyWorkOrderUseCase): Pick<ApplyWorkOrderUseCase, 'execute'> {
  return {
    execute: async (...args: Parameters<ApplyWorkOrderUseCase['execute']>) => {
      await insertActionOf(db, args[0]);
      return apply.execute(...args);
    },
  };
}

/**
 * Stores `order` as a worker that died while applying it left it: APPLYING, held by 'dead-worker'
 * whose lease runs for one more minute.
 */
export async function insertOrderLeftApplying(db: Database, order: WorkOrderMessage): Promise<void> {
  await insertActionOf(db, order);
  await db.dataSource.query(
    `INSERT INTO work_orders (action_id, cluster_id, payload, status, groups, created_at, updated_at, lease_owner, lease_token, lease_expires_at)
     VALUES ($1, NULL, $2, 'APPLYING', '{}', now(), now(), 'dead-worker', gen_random_uuid(), clock_timestamp() + interval '1 minute')`,
    [order.action_id, JSON.stringify(order)],
  );
}

/** The profile properties of the fixtures' orders (on the order: WORK_ORDER_SCHEMA_VERSION). */
export const FIXTURE_PROFILE = { flavor: 'm1.tiny', image: 'cirros', networks: [] };

export const serverFor = (node: NodeEntity, placement: ServerCreateDto['placement'] = { zone: 'az1' }): ServerCreateDto => ({
  node_id: node.id,
  name: node.name,
  index: node.index,
  placement,
});

/** The trust the fixtures' owner (user-a in project-a) gave Trellis. */
export const FIXTURE_TRUST = 'trust-user-a-project-a';

/** Stores the fixtures' trust (user-a → Trellis in project-a), as the gateway does on a first action. */
export async function storeFixtureTrust(db: Database, trustId = FIXTURE_TRUST): Promise<void> {
  await db.dataSource.query(
    `INSERT INTO trusts (user_id, project_id, trust_id, trustee_user_id, roles, created_at, verified_at)
     VALUES ('user-a', 'project-a', $1, 'trellis', '["member"]', now(), now())
     ON CONFLICT (user_id, project_id) DO UPDATE SET trust_id = EXCLUDED.trust_id`,
    [trustId],
  );
}

/**
 * NovaAccess over one FakeNova: every trust's client is that fake (the fake keeps no projects); the
 * trust ids asked for are recorded, and `refuse` makes Keystone refuse a trust.
 */
export function fakeAccess(db: Database, nova: FakeNova) {
  const asked: string[] = [];
  const refused = new Set<string>();
  const port = nova as unknown as NovaPort;
  const clients = {
    forTrust: (trustId: string): NovaPort => {
      asked.push(trustId);
      if (!refused.has(trustId)) return port;
      const refuse = async () => {
        throw Object.assign(new Error(`Could not find trust: ${trustId}.`), { name: 'TrustError', status: 404, trustId });
      };
      return new Proxy(port, { get: (t, p) => (typeof (t as never)[p] === 'function' ? refuse : (t as never)[p]) });
    },
    evict: () => undefined,
  };
  const keystone = { get: async (trustId: string) => (refused.has(trustId) ? null : { id: trustId }) };
  const access = new NovaAccess(db.dataSource, clients, port, silentLogger, keystone, { lookupCacheMs: 0 });
  return { access, asked, refuse: (trustId: string) => refused.add(trustId) };
}

/** The worker's order and build paths on `db` and a FakeNova, as worker.module wires them. */
export function workerOn(db: Database, nova: FakeNova, pollerOptions: Partial<BuildPollerOptions> = {}, pollerLogger: Logger = silentLogger) {
  const { access, asked, refuse } = fakeAccess(db, nova);
  const apply = storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, access, silentLogger, { concurrency: 4, leaseSeconds: 60 }));
  const poller = new BuildPoller(db.dataSource, access, pollerLogger, {
    workerId: 'worker-test',
    pollIntervalMs: 1000,
    leaseSeconds: 60,
    concurrency: 4,
    batchSize: 200,
    ...pollerOptions,
  });
  const node = (id: string) => db.dataSource.getRepository(NodeEntity).findOneBy({ id });
  const order = (actionId: string) => db.dataSource.getRepository(WorkOrderEntity).findOneByOrFail({ action_id: actionId });
  /** the work results written to the outbox for `actionId`, oldest first */
  const results = async (actionId: string): Promise<WorkResultMessage[]> => {
    const rows: { payload: WorkResultMessage }[] = await db.dataSource.query(
      `SELECT payload FROM outbox WHERE routing_key = $1 AND payload->>'action_id' = $2 ORDER BY id`,
      [RoutingKeys.workResult, actionId],
    );
    return rows.map((r) => r.payload);
  };
  /** the nodes whose operation's outcome is recorded for the order (work_order_ops), sorted */
  const opsRecorded = async (actionId: string): Promise<string[]> =>
    ((await db.dataSource.query('SELECT node_id FROM work_order_ops WHERE action_id = $1', [actionId])) as Array<{ node_id: string }>).map((r) => r.node_id).sort();
  return { apply, poller, node, order, results, opsRecorded, trustsAsked: asked, refuseTrust: refuse };
}
