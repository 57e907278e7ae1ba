import { silentLogger } from '@trellis/common';
import { Exchanges, RoutingKeys } from '@trellis/contracts';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { openDatabase, type Database } from '@trellis/persistence';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { createServer, connect, type Server, type Socket } from 'node:net';
import request from 'supertest';
import type { RunningGateway } from '../../apps/gateway/src/bootstrap';
import { NOVA_PROFILE_SPEC, TOKENS, startGatewayWithFakes } from '../../apps/gateway/src/testing/gateway-harness';

/**
 * A TCP hop between the gateway's connection pool and PostgreSQL that the test can cut: `down()`
 * drops every open connection (the server "crashed") and refuses new ones (nothing listens), as
 * a stopped PostgreSQL does; `up()` listens again on the same port.
 */
class CuttableProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

type Reply = { status: number; error?: { code: number; type: string; message: string }; headers: Record<string, string> };

/**
 * PostgreSQL going away under a running gateway: requests answer 503 with Retry-After and Senlin's
 * error body (not a 500 with an error id), over REST and RPC; /readyz says not ready and why; and
 * everything answers again once the database is back.
 */
describe('the gateway while PostgreSQL is down (PostgreSQL through a cuttable proxy)', () => {
  let owner: Database & { url: string; name: string };
  let db: Database;
  let proxy: CuttableProxy;
  let bus: InMemoryMessageBus;
  let gateway: RunningGateway;

  const api = () => request(gateway.url);
  const asAlice = (t: request.Test) => t.set('X-Auth-Token', TOKENS.alice).set('OpenStack-API-Version', 'clustering 1.14');
  const rpc = async (pattern: string, body?: unknown): Promise<Reply> =>
    (await bus.request(
      { token: TOKENS.alice, microversion: '1.14', body },
      { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern, timeoutMs: 20_000 },
    )) as Reply;

  beforeAll(async () => {
    owner = await openPostgresTestDatabase({ poolSize: 1 });
    const target = new URL(owner.url);
    proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.up();
    const viaProxy = new URL(owner.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    db = await openDatabase({ url: viaProxy.toString(), dataDir: ':memory:', poolSize: 2, logging: false }, silentLogger);
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    gateway = await startGatewayWithFakes(db.dataSource, bus);
  });

  afterAll(async () => {
    await gateway?.close();
    await bus?.close();
    await db?.close().catch(() => undefined);
    await proxy?.down();
    await owner?.close();
  });

  it('answers 503 with Retry-After while the database is unreachable, and serves again once it is back', async () => {
    expect((await api().get('/readyz')).body).toEqual({ status: 'ready', checks: { database: { ok: true }, broker: { ok: true } } });
    const profile = await asAlice(api().post('/v1/profiles')).send({ profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
    expect(profile.status).toBe(201);

    await proxy.down();

    for (const attempt of [asAlice(api().get('/v1/clusters')), asAlice(api().post('/v1/clusters')).send({ cluster: { name: 'c', profile_id: 'p' } })]) {
      const res = await attempt;
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toEqual({
        code: 503,
        title: 'Service Unavailable',
        explanation: 'The server is currently unavailable. Please try again at a later time.',
        error: { code: 503, message: 'The database is unavailable; try again later.', type: 'ServiceUnavailable' },
      });
    }
    const ready = await api().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    expect(ready.body.status).toBe('not ready');
    expect(ready.body.reason).toMatch(/^database: unavailable \((ECONNREFUSED|Connection terminated.*)\)$/);

    const reply = await rpc('cluster.list');
    expect([reply.status, reply.error?.type, reply.headers['retry-after']]).toEqual([503, 'ServiceUnavailable', '5']);

    await proxy.up();
    expect((await api().get('/readyz')).status).toBe(200);
    const list = await asAlice(api().get('/v1/clusters'));
    expect([list.status, list.body.clusters]).toEqual([200, []]);
  });
});
