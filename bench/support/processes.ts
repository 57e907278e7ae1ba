import { execFileSync, spawn, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import { createServer } from 'net';
import * as path from 'path';
import { Client } from 'pg';

/**
 * Processes, databases and vhosts for the benchmarks that run Trellis's services for real. The
 * test suite has its own copies in test/support; dist/bench cannot import test/, which is not built.
 */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const baseDatabaseUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const baseAmqpUrl = () => process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

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

export interface FreshDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** An empty database of its own on the local PostgreSQL, dropped by `drop()`. */
export async function freshDatabase(prefix = 'trellis_bench'): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: baseDatabaseUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A RabbitMQ virtual host of its own (queue names are fixed); needs rabbitmqctl. */
export function freshVhost(prefix = 'trellis-bench'): { name: string; url: string; drop(): void } {
  const vhost = `${prefix}-${randomBytes(4).toString('hex')}`;
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', vhost]);
  const user = new URL(baseAmqpUrl()).username || 'guest';
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', vhost, user, '.*', '.*', '.*']);
  const url = new URL(baseAmqpUrl());
  url.pathname = `/${vhost}`;
  return { name: vhost, url: url.toString(), drop: () => execFileSync('rabbitmqctl', ['-q', 'delete_vhost', vhost]) };
}

export interface Memory {
  /** VmRSS: resident now */
  rss_bytes: number;
  /** VmHWM: the most it was resident */
  peak_rss_bytes: number;
}

/** Resident memory of a process from /proc (Linux); null when it is gone or /proc is not there. */
export function memoryOf(pid: number): Memory | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { rss_bytes: kb('VmRSS'), peak_rss_bytes: kb('VmHWM') };
}

/**
 * CPU seconds (user + system) used so far by every running process whose command name (/proc/<pid>/comm)
 * is one of `names` (e.g. postgres, beam.smp): a server's share of a run is the growth of this sum.
 * Processes that exit in between take their time with them (short-lived backends: a lower bound).
 */
export function cpuSecondsOfCommands(names: readonly string[]): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && names.includes(stat.comm)) total += stat.cpuSeconds;
  }
  return total;
}

/** A process's command name and CPU seconds (user + system) from /proc/<pid>/stat; null when gone. */
function procStat(pid: number): { comm: string; cpuSeconds: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after "pid (comm) "
    return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
  } catch {
    return null;
  }
}

/** The OS process of the RabbitMQ node `rabbitmqctl` talks to (the benchmarks' broker); null when unknown. */
export function rabbitmqPid(): number | null {
  try {
    const out = execFileSync('rabbitmqctl', ['eval', 'os:getpid().'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(/"(\d+)"/.exec(out)?.[1]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; null when gone. */
export function cpuSecondsOf(pid: number): number | null {
  return procStat(pid)?.cpuSeconds ?? null;
}

/** One of Trellis's compiled entry points (`dist/<entry>`) as a child process. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private readonly output: string[] = [];
  private exited: Promise<void> | null = null;
  /** when spawn() was called (ms since the epoch) */
  startedAt = 0;

  constructor(
    readonly name: string,
    private readonly root: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
  ) {}

  /**
   * `TRELLIS_BENCH_NODE_ARGS` (space-separated) goes before the entry point of every service, to
   * profile them under a benchmark's load: `--cpu-prof --cpu-prof-dir=/tmp/prof` (BENCHMARKS.md).
   */
  static entry(name: string, root: string, entry: string, env: Record<string, string>): ServiceProcess {
    const nodeArgs = (process.env.TRELLIS_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    return new ServiceProcess(name, root, [...nodeArgs, path.join(root, 'dist', entry)], env);
  }

  start(): this {
    this.startedAt = Date.now();
    this.child = spawn(process.execPath, this.args, {
      cwd: this.root,
      // several engines and workers share this machine (and its real cloud's Placement on 8778): each
      // serves /healthz, /readyz and /metrics on a free port unless the test names one (the gateway
      // serves them on its API port)
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(/policy-engine|nova-worker/.test(this.args.join(" ")) ? { TRELLIS_OPS_PORT: '0' } : {}), ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      this.output.push(d.toString());
      if (this.output.length > 400) this.output.splice(0, 100);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    const child = this.child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    return this;
  }

  get pid(): number {
    if (!this.child?.pid) throw new Error(`${this.name} is not running`);
    return this.child.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  memory(): Memory | null {
    return this.child?.pid ? memoryOf(this.child.pid) : null;
  }

  cpuSeconds(): number | null {
    return this.child?.pid ? cpuSecondsOf(this.child.pid) : null;
  }

  logs(): string {
    return this.output.join('');
  }

  /** SIGTERM (the services' orderly shutdown), SIGKILL after 15 s */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.kill('SIGTERM');
    await this.exited;
    clearTimeout(killer);
  }

  /** fails with the tail of the process's output when it exited */
  assertRunning(): void {
    if (this.child && !this.running) {
      throw new Error(`${this.name} exited (code ${this.child.exitCode}, signal ${this.child.signalCode}):\n${this.logs().slice(-3000)}`);
    }
  }
}

/** Polls `probe` every `everyMs` until it returns something truthy; the error names `what`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  options: { timeoutMs?: number; everyMs?: number; alive?: () => void } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    options.alive?.();
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      lastError = e;
    }
    await sleep(options.everyMs ?? 50);
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}

/** true when an HTTP GET of `url` gets any answer */
export async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

export const MB = 2 ** 20;
export const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
