import {
  loadConfig,
  silentLogger,
  type AuthContext,
  type CatalogAnswer,
  type CloudCatalog,
  type Logger,
} from '@trellis/common';
import type { PasswordSignIn, TokenValidator, TrustIssuer } from '@trellis/identity';
import { Exchanges, RoutingKeys } from '@trellis/contracts';
import type { MessageBus, OutgoingMessage } from '@trellis/messaging/bus.port';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { PolicyRegistry } from '@trellis/policies';
import { openTestDatabase } from '@trellis/testing/database';
import type { Database, NodeEntity } from '@trellis/persistence';
import type { DataSource } from 'typeorm';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { startGateway, type RunningGateway } from '../bootstrap';

/**
 * Two projects with a member each, a reader and two admins of project A (carol, pat), an admin in
 * the admin project (a cloud admin: the harness's TRELLIS_ADMIN_PROJECT is ADMIN_PROJECT) and a
 * system-scoped admin.
 */
export const PROJECT_A = 'aaaaaaaa0000000000000000000000aa';
export const PROJECT_B = 'bbbbbbbb0000000000000000000000bb';
export const ADMIN_PROJECT = 'cccccccc0000000000000000000000cc';

/** An AuthContext as the Keystone token validator builds it (libs/identity/src/keystone/token-validator.ts). */
export function testCaller(spec: { token: string; user: string; project: string | null; roles: string[] }): AuthContext {
  const hasAdmin = spec.roles.includes('admin');
  const isAdminProject = spec.project === ADMIN_PROJECT;
  const systemScope = spec.project === null ? 'all' : null;
  return {
    token: spec.token,
    userId: `${spec.user}-id`,
    userName: spec.user,
    projectId: spec.project ?? '',
    projectName: spec.project === null ? '' : `${spec.user}-project`,
    domainId: 'default',
    roles: spec.roles,
    isAdmin: hasAdmin && (isAdminProject || systemScope === 'all'),
    isProjectAdmin: hasAdmin && spec.project !== null,
    systemScope,
    isAdminProject,
    expiresAt: new Date(Date.now() + 3600_000),
  };
}

export const TOKENS = {
  alice: 'token-alice',
  bob: 'token-bob',
  admin: 'token-admin',
  /** carol: an admin of project A who is not a cloud admin */
  carol: 'token-carol',
  /** `reader` only, in project A */
  reader: 'token-reader',
  /** `admin` (and member, reader) in project A: administers A, not the cloud */
  projectAdmin: 'token-project-admin',
  /** a system-scoped token with `admin`: a cloud admin without a project */
  system: 'token-system',
} as const;

export class FakeTokenValidator implements TokenValidator {
  readonly callers = new Map<string, AuthContext>(
    [
      testCaller({ token: TOKENS.alice, user: 'alice', project: PROJECT_A, roles: ['member'] }),
      testCaller({ token: TOKENS.bob, user: 'bob', project: PROJECT_B, roles: ['member'] }),
      testCaller({ token: TOKENS.admin, user: 'admin', project: ADMIN_PROJECT, roles: ['admin', 'member'] }),
      testCaller({ token: TOKENS.carol, user: 'carol', project: PROJECT_A, roles: ['admin', 'member'] }),
      testCaller({ token: TOKENS.reader, user: 'rita', project: PROJECT_A, roles: ['reader'] }),
      testCaller({ token: TOKENS.projectAdmin, user: 'pat', project: PROJECT_A, roles: ['admin', 'member', 'reader'] }),
      testCaller({ token: TOKENS.system, user: 'sys', project: null, roles: ['admin'] }),
    ].map((c) => [c.token, c]),
  );

  async validate(token: string): Promise<AuthContext | null> {
    return this.callers.get(token) ?? null;
  }
}

/** Keystone's OS-TRUST in memory: records the trusts made, and can forget one (a revocation). */
export class RecordingTrustIssuer implements TrustIssuer {
  readonly trusts = new Map<string, { trustorUserId: string; projectId: string; roles: string[]; token: string }>();
  gets = 0;
  private next = 0;

  async serviceUserId(): Promise<string> {
    return 'trellis-service-user';
  }

  async create(userToken: string, input: { trustorUserId: string; projectId: string; roles: string[] }): Promise<{ id: string }> {
    const id = `trust-${++this.next}`;
    this.trusts.set(id, { ...input, token: userToken });
    return { id };
  }

  async get(trustId: string): Promise<{ id: string } | null> {
    this.gets++;
    return this.trusts.has(trustId) ? { id: trustId } : null;
  }

  revoke(trustId: string): void {
    this.trusts.delete(trustId);
  }
}

/**
 * Glance, Nova and Neutron as a project sees them: the names and ids each knows (NOVA_PROFILE_SPEC's
 * by default), the tokens it was asked with, and `down` to answer like a cloud that does not.
 */
export class FakeCloudCatalog implements CloudCatalog {
  readonly images = new Set(['cirros', 'cirros-fake']);
  readonly flavors = new Set(['m1.small', '1']);
  /** null: the cloud has no network service */
  networks: Set<string> | null = new Set(['private']);
  readonly tokens: string[] = [];
  down: Error | null = null;

  findImage(token: string, ref: string) {
    return this.answer(token, this.images, ref);
  }
  findFlavor(token: string, ref: string) {
    return this.answer(token, this.flavors, ref);
  }
  findNetwork(token: string, ref: string) {
    return this.answer(token, this.networks, ref);
  }

  private async answer(token: string, known: Set<string> | null, ref: string): Promise<CatalogAnswer> {
    this.tokens.push(token);
    if (this.down) throw this.down;
    if (known === null) return 'unchecked';
    return known.has(ref) ? 'found' : 'missing';
  }
}

/**
 * The gateway never publishes itself (the outbox relay does), so a bus that records what it is given
 * and refuses everything else shows a stray publish at once.
 */
export class RecordingBus implements MessageBus {
  readonly published: OutgoingMessage[] = [];
  async start(): Promise<void> {}
  async publish(message: OutgoingMessage): Promise<void> {
    this.published.push(message);
  }
  consume(): never {
    throw new Error('the gateway does not consume');
  }
  request(): never {
    throw new Error('the gateway does not send RPC requests');
  }
  serve(): never {
    throw new Error('not used by these tests');
  }
  drainDeadLetters(): never {
    throw new Error('not used by these tests');
  }
  async depth(): Promise<number> {
    return 0;
  }
  async close(): Promise<void> {}
}

export interface GatewayHarness {
  bus: RecordingBus;
  cloud: FakeCloudCatalog;
  trusts: RecordingTrustIssuer;
  gateway: RunningGateway;
  db: Database;
  http(): ReturnType<typeof request>;
  /** supertest with a token and microversion already set */
  as(token: string, version?: string): Client;
  close(): Promise<void>;
}

export interface Client {
  get(path: string): request.Test;
  post(path: string, body?: unknown): request.Test;
  patch(path: string, body?: unknown): request.Test;
  delete(path: string): request.Test;
}

/**
 * A free port, and no request rate: specs fire requests as fast as the machine answers, so on a fast
 * one a spec of a hundred requests would meet the default rate (20 a second, bursts of 100; over RPC
 * 100 a second, bursts of 1,000) and fail
 * by timing. apps/gateway/src/limits sets the rate it tests; the limits on unfinished actions stay.
 */
const HARNESS_ENV = { TRELLIS_PORT: '0', TRELLIS_REQUESTS_PER_SECOND: '0', TRELLIS_RPC_REQUESTS_PER_SECOND: '0' };

/**
 * The gateway (REST, and RPC on `bus` unless `rpc: false`) on the given database and bus, with the
 * fake Keystone, trust issuer and cloud catalog above: for specs that need a real bus or database.
 */
export function startGatewayWithFakes(
  dataSource: DataSource,
  bus: MessageBus,
  options: { rpc?: false; env?: Record<string, string>; trusts?: RecordingTrustIssuer } = {},
): Promise<RunningGateway> {
  return startGateway({
    config: loadConfig({ ...HARNESS_ENV, ...options.env }),
    dataSource,
    bus,
    tokenValidator: new FakeTokenValidator(),
    trusts: options.trusts ?? new RecordingTrustIssuer(),
    cloudCatalog: new FakeCloudCatalog(),
    registry: PolicyRegistry.withBuiltins(),
    logger: silentLogger,
    ...(options.rpc === false ? { rpc: false as const } : {}),
  });
}

/** What the gateway's RPC server answers. */
export interface RpcReply {
  status: number;
  /** whatever the REST call answers */
  body?: any;
  action_id?: string;
  error?: { code: number; message: string; type: string };
  headers: Record<string, string>;
}

/**
 * For a describe block: the gateway (REST and RPC) on its own PGlite database and a started
 * in-memory bus, with the fakes above; started before the block's tests (`seed` gets the database
 * first) and closed after them. `t`'s fields are there once that beforeAll has run.
 */
export function gatewayOnBus(options: { env?: Record<string, string>; seed?: (db: Database) => Promise<unknown> } = {}) {
  const t = { trusts: new RecordingTrustIssuer() } as { db: Database; bus: InMemoryMessageBus; gateway: RunningGateway; trusts: RecordingTrustIssuer };
  beforeAll(async () => {
    t.db = await openTestDatabase();
    t.bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await t.bus.start();
    await options.seed?.(t.db);
    t.gateway = await startGatewayWithFakes(t.db.dataSource, t.bus, { env: options.env, trusts: t.trusts });
  });
  afterAll(async () => {
    await t.gateway?.close();
    await t.bus?.close();
    await t.db?.close();
  });
  /** supertest as `token` at a microversion (1.14 unless said) */
  const rest = (token: string, version = '1.14') => ({
    get: (path: string) => request(t.gateway.url).get(path).set('X-Auth-Token', token).set('OpenStack-API-Version', `clustering ${version}`),
    post: (path: string, body: object) =>
      request(t.gateway.url).post(path).set('X-Auth-Token', token).set('OpenStack-API-Version', `clustering ${version}`).send(body),
  });
  /** an RPC request on the bus as `token`, as another service sends one */
  const rpc = async (token: string, pattern: string, params?: Record<string, unknown>, body?: unknown, microversion = '1.14'): Promise<RpcReply> =>
    (await t.bus.request(
      { token, microversion, params, body },
      { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern, timeoutMs: 20_000 },
    )) as RpcReply;
  return { t, rest, rpc };
}

/** The gateway on a fresh in-memory PGlite, an in-memory bus and the fake Keystone above. */
export async function startGatewayHarness(
  options: { env?: Record<string, string>; logger?: Logger; signIn?: PasswordSignIn } = {},
): Promise<GatewayHarness> {
  const db = await openTestDatabase();
  const config = loadConfig({ ...HARNESS_ENV, TRELLIS_ADMIN_PROJECT: ADMIN_PROJECT, ...options.env });
  const bus = new RecordingBus();
  const trusts = new RecordingTrustIssuer();
  const cloud = new FakeCloudCatalog();
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      config,
      dataSource: db.dataSource,
      bus,
      tokenValidator: new FakeTokenValidator(),
      trusts,
      cloudCatalog: cloud,
      registry: PolicyRegistry.withBuiltins(),
      logger: options.logger ?? silentLogger,
      signIn: options.signIn,
      // HTTP only: the RPC transport has its own tests on the in-memory bus (rpc/rpc-server.spec.ts)
      rpc: false,
    });
  } catch (e) {
    await db.close();
    throw e;
  }
  const http = () => request(gateway.url);
  const as = (token: string, version?: string): Client => {
    const prepare = (t: request.Test) => {
      t.set('X-Auth-Token', token);
      if (version) t.set('OpenStack-API-Version', `clustering ${version}`);
      return t;
    };
    return {
      get: (path) => prepare(http().get(path)),
      post: (path, body) => prepare(http().post(path)).send(body as object),
      patch: (path, body) => prepare(http().patch(path)).send(body as object),
      delete: (path) => prepare(http().delete(path)),
    };
  };
  return {
    bus,
    cloud,
    trusts,
    gateway,
    db,
    http,
    as,
    close: async () => {
      await gateway.close();
      await db.close();
    },
  };
}

export const NOVA_PROFILE_SPEC = {
  type: 'os.nova.server',
  version: 1.0,
  properties: { flavor: 'm1.small', image: 'cirros', networks: [{ network: 'private' }], metadata: { role: 'web' } },
};

/**
 * A node row as the gateway stores one: alice's in PROJECT_A, ACTIVE, in no cluster, without a
 * server and held by no action, but for what `over` says. For specs that put nodes in the
 * database by hand (the engine and the worker are not there to make them).
 */
export function nodeRow(over: Partial<NodeEntity> & Pick<NodeEntity, 'profile_id'>): NodeEntity {
  const id = over.id ?? randomUUID();
  return {
    id,
    name: `n-${id.slice(0, 6)}`,
    cluster_id: null,
    project: PROJECT_A,
    user: 'alice-id',
    domain: null,
    physical_id: null,
    index: 1,
    role: null,
    status: 'ACTIVE',
    status_reason: '',
    data: {},
    metadata: {},
    tainted: false,
    init_at: new Date(),
    created_at: new Date(),
    updated_at: null,
    action_id: null,
    lease_owner: null,
    lease_expires_at: null,
    build_deadline: null,
    ...over,
  };
}
