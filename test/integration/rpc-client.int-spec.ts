import * as amqp from 'amqplib';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ApiClient, keystoneToken } from '../support/api-client';
import { ServiceProcess, freePort, freshDatabase, freshVhost, simulatorCloudEnv, waitFor } from '../support/processes';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'dist', 'examples', 'rpc-client', 'src', 'scale-out.js');

interface Run {
  code: number | null;
  lines: Array<Record<string, any>>;
  stderr: string;
}

/** Runs the compiled example as a user would, with only AMQP_URL and OS_TOKEN in its environment. */
function runExample(env: Record<string, string>, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EXAMPLE, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, any>);
      resolve({ code, lines, stderr });
    });
  });
}

/** Raw requests, for what a well-behaved client never sends (not JSON, no reply-to). */
class RawRpc {
  private readonly replies = new Map<string, (reply: any) => void>();
  private constructor(
    readonly connection: amqp.ChannelModel,
    readonly channel: amqp.ConfirmChannel,
  ) {}

  static async open(url: string): Promise<RawRpc> {
    const connection = await amqp.connect(url);
    const channel = await connection.createConfirmChannel();
    const raw = new RawRpc(connection, channel);
    await channel.consume(
      'amq.rabbitmq.reply-to',
      (msg) => msg && raw.replies.get(msg.properties.correlationId)?.(JSON.parse(msg.content.toString())),
      { noAck: true },
    );
    return raw;
  }

  send(pattern: string | undefined, content: Buffer, timeoutMs = 15_000): Promise<any> {
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${pattern} within ${timeoutMs} ms`)), timeoutMs);
      this.replies.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.channel.publish('trellis.rpc', 'rpc.request', content, {
        ...(pattern ? { type: pattern } : {}),
        correlationId: id,
        messageId: id,
        replyTo: 'amq.rabbitmq.reply-to',
        contentType: 'application/json',
      });
    });
  }

  json(pattern: string, body: unknown): Promise<any> {
    return this.send(pattern, Buffer.from(JSON.stringify(body)));
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

/**
 * Issue 3 §9: other services call Trellis over RabbitMQ. The gateway, policy-engine and nova-worker
 * run as processes on real RabbitMQ and PostgreSQL; the example client in examples/rpc-client
 * (plain amqplib) scales a cluster out and waits for the action-finished notification.
 */
describe('RPC over RabbitMQ: the example client (RabbitMQ + PostgreSQL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let vhost: { url: string; drop: () => void };
  let simUrl: string;
  const services: ServiceProcess[] = [];
  let api: ApiClient;
  let demoToken: string;
  let adminToken: string;

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
    const simPort = await freePort();
    const apiPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    const sim = new ServiceProcess('nova-simulator', 'apps/nova-simulator/src/main.js', {
      SIMULATOR_PORT: String(simPort),
      SIMULATOR_BUILD_DELAY_MS: '300',
      LOG_LEVEL: 'warn',
    }).start();
    services.push(sim);
    await waitFor('the simulator', async () => (await fetch(`${simUrl}/identity/v3`)).ok);
    const env = {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      ...simulatorCloudEnv(simUrl),
      TRELLIS_PORT: String(apiPort),
      TRELLIS_POLL_INTERVAL_MS: '200',
      LOG_LEVEL: 'warn',
    };
    for (const [name, entry] of [
      ['gateway', 'apps/gateway/src/main.js'],
      ['policy-engine', 'apps/policy-engine/src/main.js'],
      ['nova-worker', 'apps/nova-worker/src/main.js'],
    ]) {
      services.push(new ServiceProcess(name, entry, env).start());
    }
    const url = `http://127.0.0.1:${apiPort}`;
    await waitFor('the gateway', async () => (await fetch(`${url}/`)).status === 300, 60_000);
    const authUrl = `${simUrl}/identity/v3`;
    demoToken = await keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    adminToken = await keystoneToken(authUrl, { name: 'admin', password: 'admin', project: 'admin' });
    api = new ApiClient(url, demoToken);
  });

  afterAll(async () => {
    for (const s of services.reverse()) await s.stop();
    vhost?.drop();
    await db?.drop();
  });

  function dumpLogs(): void {
    for (const s of services) process.stderr.write(`--- ${s.name}\n${s.logs().slice(-4000)}\n`);
  }

  it('scales a cluster out by name, gets the action id, and prints the action-finished notification', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'rpc-example');
    const run = await runExample({ AMQP_URL: vhost.url, OS_TOKEN: demoToken }, ['--cluster', 'rpc-example', '--count', '2', '--timeout', '90']);
    if (run.code !== 0) {
      process.stderr.write(`example stderr:\n${run.stderr}\nstdout: ${JSON.stringify(run.lines)}\n`);
      dumpLogs();
    }
    expect(run.code).toBe(0);
    expect(run.lines.map((l) => l.event)).toEqual(['cluster', 'accepted', 'finished']);
    const [cluster, accepted, finished] = run.lines;
    expect(cluster).toMatchObject({ id: clusterId, name: 'rpc-example', desired_capacity: 0 });
    expect(accepted.action_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(accepted).toMatchObject({ status: 202 });
    expect(accepted.location).toMatch(new RegExp(`/v1/actions/${accepted.action_id}$`));
    expect(finished).toMatchObject({ action_id: accepted.action_id, action: 'CLUSTER_SCALE_OUT', status: 'SUCCEEDED' });

    // what REST says about the same action and cluster
    const action = await api.get(`/v1/actions/${accepted.action_id}`);
    expect(action.body.action).toMatchObject({ status: 'SUCCEEDED', action: 'CLUSTER_SCALE_OUT', target: clusterId });
    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(2);
    expect(nodes.every((n) => n.status === 'ACTIVE')).toBe(true);
  });

  it('prints the error reply and exits non-zero for a cluster of another project', async () => {
    await createProfileAndCluster(api, 'rpc-private');
    const run = await runExample({ AMQP_URL: vhost.url, OS_TOKEN: adminToken }, ['--cluster', 'rpc-private']);
    expect(run.code).toBe(1);
    expect(run.lines).toEqual([
      {
        event: 'error',
        pattern: 'cluster.show',
        status: 404,
        error: { code: 404, message: "The cluster 'rpc-private' could not be found.", type: 'ResourceNotFound' },
      },
    ]);
  });

  describe('error replies over RabbitMQ', () => {
    let raw: RawRpc;
    beforeAll(async () => {
      raw = await RawRpc.open(vhost.url);
    });
    afterAll(() => raw?.close());

    it('answers a body that is not JSON, an unknown pattern, a missing pattern and a missing token', async () => {
      const notJson = await raw.send('cluster.list', Buffer.from('hello, gateway'));
      expect(notJson).toMatchObject({ status: 400, error: { code: 400, type: 'HTTPBadRequest' } });
      expect(notJson.error.message).toMatch(/^Malformed request body/);
      expect(await raw.json('cluster.launch_rockets', { token: demoToken })).toMatchObject({
        status: 404,
        error: { message: "Unknown message pattern 'cluster.launch_rockets'." },
      });
      expect(await raw.send(undefined, Buffer.from('{}'))).toMatchObject({ status: 400, error: { type: 'HTTPBadRequest' } });
      expect(await raw.json('cluster.list', { microversion: '1.14' })).toMatchObject({
        status: 401,
        error: { code: 401, message: 'The request you have made requires authentication.', type: 'HTTPUnauthorized' },
      });
      expect(await raw.json('cluster.list', { token: 'not-a-keystone-token' })).toMatchObject({ status: 401 });
      const listed = await raw.json('cluster.list', { token: demoToken, microversion: '1.14', params: { name: 'rpc-example' } });
      expect(listed.status).toBe(200);
      expect(listed.body.clusters.map((c: { name: string }) => c.name)).toEqual(['rpc-example']);
    });

    it('dead-letters a request without a reply-to address, with the reason, instead of dropping it', async () => {
      raw.channel.publish('trellis.rpc', 'rpc.request', Buffer.from(JSON.stringify({ token: demoToken })), {
        type: 'cluster.list',
        messageId: randomUUID(),
      });
      await raw.channel.waitForConfirms();
      const dead = await waitFor('the dead-lettered request', async () => {
        const msg = await raw.channel.get('trellis.gateway.rpc.dlq', { noAck: true });
        return msg || null;
      });
      expect(dead.properties.headers?.['x-trellis-dead-letter-reason']).toBe('RPC request without a reply-to address');
    });
  });
});
