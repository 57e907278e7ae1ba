import 'reflect-metadata';
import * as amqp from 'amqplib';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Queues } from '@trellis/contracts';
import { simulatorCloudEnv } from '@trellis/testing/simulator-env';
import { FreshDatabase, ServiceProcess, answers, freePort, freshDatabase, freshVhost, sleep, waitFor } from './processes';

/**
 * Trellis as production runs it: the Nova simulator, gateway, policy-engine and nova-worker, each a
 * process of its own (`dist/apps/<app>/src/main.js`), on a fresh PostgreSQL database and a fresh
 * RabbitMQ vhost.
 */

/**
 * The benchmarks load one project far past its limits on purpose (200 scale-outs in flight, lists
 * as fast as they answer): they measure the pipeline, not the gateway's admission control, so the
 * limits of docs/SECURITY.md ("Limits") are off.
 */
export const NO_ADMISSION_LIMITS = { TRELLIS_MAX_ACTIONS_PER_PROJECT: '0', TRELLIS_MAX_ACTIONS: '0', TRELLIS_REQUESTS_PER_SECOND: '0' };

/**
 * The V8 heap limits the services are deployed with: docker-compose.yml's NODE_OPTIONS, read from the
 * file so a benchmark measures what is deployed. Zero when it sets none.
 */
export function deployedHeapLimits(root: string): { semi_space_mb: number; old_space_mb: number } {
  const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const options = /^\s*NODE_OPTIONS:\s*(.+)$/m.exec(compose)?.[1] ?? '';
  const flag = (name: string) => Number(new RegExp(`--${name}=(\\d+)`).exec(options)?.[1] ?? 0);
  return { semi_space_mb: flag('max-semi-space-size'), old_space_mb: flag('max-old-space-size') };
}

/** NODE_OPTIONS for those limits ('' for Node's defaults). */
export function heapFlags(limits: { semi_space_mb: number; old_space_mb: number }): string {
  return [limits.semi_space_mb ? `--max-semi-space-size=${limits.semi_space_mb}` : '', limits.old_space_mb ? `--max-old-space-size=${limits.old_space_mb}` : '']
    .filter(Boolean)
    .join(' ');
}

export type ServiceName = 'nova-simulator' | 'gateway' | 'policy-engine' | 'nova-worker';
export const SERVICES: ServiceName[] = ['nova-simulator', 'gateway', 'policy-engine', 'nova-worker'];

export interface StackOptions {
  root: string;
  /** SIMULATOR_BUILD_DELAY_MS */
  buildDelayMs: number;
  /** zones × hosts per zone, each host holding `instancesPerHost` servers */
  zones: number;
  hostsPerZone: number;
  instancesPerHost: number;
  /** extra environment for the three Trellis services */
  env?: Record<string, string>;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** start the services one after another and time each (footprint); otherwise all at once */
  sequential?: boolean;
  /** 'defaults': the gateway's limits as shipped (burst); otherwise off (NO_ADMISSION_LIMITS) */
  admissionLimits?: 'off' | 'defaults';
}

export interface Stack {
  db: FreshDatabase;
  vhost: { name: string; url: string };
  simUrl: string;
  authUrl: string;
  computeUrl: string;
  apiUrl: string;
  /** the nova-worker's /metrics (its TRELLIS_OPS_PORT) */
  workerMetricsUrl: string;
  env: Record<string, string>;
  services: Record<ServiceName, ServiceProcess>;
  /** true once the service is ready: HTTP answers (simulator, gateway), its queues have a consumer (engine, worker) */
  ready: Record<ServiceName, () => Promise<boolean>>;
  /** ms from spawn until ready, per service (meaningful when started sequentially) */
  startupMs: Partial<Record<ServiceName, number>>;
  /** stops every service (SIGTERM) but keeps the database and vhost */
  stopServices(): Promise<void>;
  /** stops everything and drops the database and the vhost */
  close(): Promise<void>;
}

export function topologyYaml(zones: number, hostsPerZone: number, instancesPerHost: number): string {
  const lines = ['zones:'];
  for (let z = 1; z <= zones; z++) {
    lines.push(`  - name: az${z}`, '    hosts:');
    for (let h = 1; h <= hostsPerZone; h++) {
      lines.push(`      - name: az${z}-host-${h}`, `        capacity: { instances: ${instancesPerHost} }`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** consumers on a queue of the vhost, 0 while the queue does not exist yet */
async function consumers(amqpUrl: string, queue: string): Promise<number> {
  const conn = await amqp.connect(amqpUrl);
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    try {
      return (await ch.checkQueue(queue)).consumerCount;
    } catch {
      return 0;
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const db = await freshDatabase();
  let vhost: ReturnType<typeof freshVhost>;
  try {
    vhost = freshVhost();
  } catch (e) {
    await db.drop();
    throw e;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-bench-'));
  const topologyFile = path.join(dir, 'topology.yaml');
  fs.writeFileSync(topologyFile, topologyYaml(options.zones, options.hostsPerZone, options.instancesPerHost));
  const simPort = await freePort();
  const apiPort = await freePort();
  const workerOpsPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  const logLevel = options.logLevel ?? 'warn';
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    AMQP_URL: vhost.url,
    ...simulatorCloudEnv(simUrl),
    TRELLIS_PORT: String(apiPort),
    LOG_LEVEL: logLevel,
    ...(options.admissionLimits === 'defaults' ? {} : NO_ADMISSION_LIMITS),
    ...options.env,
  };
  const services: Record<ServiceName, ServiceProcess> = {
    'nova-simulator': ServiceProcess.entry('nova-simulator', options.root, 'apps/nova-simulator/src/main.js', {
      SIMULATOR_PORT: String(simPort),
      SIMULATOR_BUILD_DELAY_MS: String(options.buildDelayMs),
      SIMULATOR_TOPOLOGY_FILE: topologyFile,
      LOG_LEVEL: logLevel,
    }),
    gateway: ServiceProcess.entry('gateway', options.root, 'apps/gateway/src/main.js', env),
    'policy-engine': ServiceProcess.entry('policy-engine', options.root, 'apps/policy-engine/src/main.js', env),
    'nova-worker': ServiceProcess.entry('nova-worker', options.root, 'apps/nova-worker/src/main.js', { ...env, TRELLIS_OPS_PORT: String(workerOpsPort) }),
  };
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const ready: Record<ServiceName, () => Promise<boolean>> = {
    'nova-simulator': () => answers(`${simUrl}/identity/v3`),
    gateway: () => answers(`${apiUrl}/`),
    'policy-engine': async () => (await consumers(vhost.url, Queues.engineActions)) > 0 && (await consumers(vhost.url, Queues.engineResults)) > 0,
    'nova-worker': async () => (await consumers(vhost.url, Queues.workerOrders)) > 0,
  };
  const startupMs: Stack['startupMs'] = {};
  const launch = async (name: ServiceName) => {
    const s = services[name].start();
    await waitFor(name, ready[name], { timeoutMs: 120_000, everyMs: 20, alive: () => s.assertRunning() });
    startupMs[name] = Date.now() - s.startedAt;
  };
  const stopServices = async () => {
    for (const name of ['gateway', 'policy-engine', 'nova-worker', 'nova-simulator'] as ServiceName[]) await services[name].stop();
  };
  const close = async () => {
    await stopServices();
    try {
      vhost.drop();
    } catch {
      /* the vhost may already be gone; nothing else to clean */
    }
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await launch('nova-simulator');
    if (options.sequential) {
      // The gateway migrates the fresh database first, so the others' start-up does not include it.
      for (const name of ['gateway', 'policy-engine', 'nova-worker'] as ServiceName[]) {
        await launch(name);
        await sleep(500);
      }
    } else {
      await launch('gateway');
      await Promise.all([launch('policy-engine'), launch('nova-worker')]);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return {
    db,
    vhost,
    simUrl,
    authUrl: `${simUrl}/identity/v3`,
    computeUrl: `${simUrl}/compute/v2.1`,
    apiUrl,
    workerMetricsUrl: `http://127.0.0.1:${workerOpsPort}/metrics`,
    env,
    services,
    ready,
    startupMs,
    stopServices,
    close,
  };
}

export async function keystoneToken(authUrl: string, user: { name: string; password: string; project: string }): Promise<string> {
  const res = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user.name, domain: { name: 'Default' }, password: user.password } } },
        scope: { project: { name: user.project, domain: { name: 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`Keystone refused ${user.name}: ${res.status} ${await res.text()}`);
  return res.headers.get('x-subject-token')!;
}

export const demoToken = (authUrl: string) => keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' });
export const adminToken = (authUrl: string) => keystoneToken(authUrl, { name: 'admin', password: 'admin', project: 'admin' });

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** The clustering API as a client calls it (token, microversion 1.14). */
export class Api {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async call(method: string, p: string, body?: unknown): Promise<ApiResponse> {
    const res = await fetch(`${this.baseUrl}${p}`, {
      method,
      headers: {
        'X-Auth-Token': this.token,
        'OpenStack-API-Version': 'clustering 1.14',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: the text goes into the error message */
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  async expect(status: number, method: string, p: string, body?: unknown): Promise<ApiResponse> {
    const res = await this.call(method, p, body);
    if (res.status !== status) throw new Error(`${method} ${p}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  }

  static actionIdOf(res: ApiResponse): string {
    const location = res.headers.get('location');
    if (!location) throw new Error(`no Location header in ${res.status} ${JSON.stringify(res.body)}`);
    return location.split('/actions/')[1];
  }

  async waitForAction(actionId: string, timeoutMs = 120_000): Promise<Record<string, any>> {
    return waitFor(
      `action ${actionId}`,
      async () => {
        const a = (await this.expect(200, 'GET', `/v1/actions/${actionId}`)).body.action;
        return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(a.status) ? a : null;
      },
      { timeoutMs, everyMs: 100 },
    );
  }
}

/** The profile every benchmark cluster uses. */
export const PROFILE_SPEC = {
  type: 'os.nova.server',
  version: 1.0,
  properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] },
};
