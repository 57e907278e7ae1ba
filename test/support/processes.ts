import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';

const ROOT = join(__dirname, '..', '..');

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export const baseDatabaseUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const baseAmqpUrl = () => process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A database of its own for one test file, dropped by the returned function. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `trellis_it_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: baseDatabaseUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A RabbitMQ virtual host of its own (queues have fixed names; a vhost per test file keeps runs
 * apart). Needs rabbitmqctl, which the development and CI machines have.
 */
export function freshVhost(): { url: string; drop: () => void } {
  const vhost = `trellis-it-${randomBytes(4).toString('hex')}`;
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', vhost]);
  const user = new URL(baseAmqpUrl()).username || 'guest';
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', vhost, user, '.*', '.*', '.*']);
  const url = new URL(baseAmqpUrl());
  url.pathname = `/${vhost}`;
  return { url: url.toString(), drop: () => execFileSync('rabbitmqctl', ['-q', 'delete_vhost', vhost]) };
}

export class ServiceProcess {
  private child: ChildProcess | null = null;
  readonly output: string[] = [];

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    /** every line the process prints is appended here too (the last lines stay in `output`) */
    private readonly logFile?: string,
  ) {}

  start(): this {
    this.child = spawn(process.execPath, [join(ROOT, 'dist', this.entry)], {
      cwd: ROOT,
      // several engines and workers share this machine (and its real cloud's Placement on 8778): each
      // serves /healthz, /readyz and /metrics on a free port unless the test names one (the gateway
      // serves them on its API port)
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(/policy-engine|nova-worker/.test(this.entry) ? { TRELLIS_OPS_PORT: '0' } : {}), ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      if (this.logFile) appendFileSync(this.logFile, d);
      this.output.push(d.toString());
      if (this.output.length > 400) this.output.splice(0, 100);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    return this;
  }

  /** SIGKILL: no shutdown hooks, unacked messages go back to the broker */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  private async signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.kill(sig);
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  logs(): string {
    return this.output.join('');
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      lastError = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}


export { simulatorCloudEnv } from '@trellis/testing/simulator-env';
