import { execFileSync } from 'child_process';
import * as fs from 'fs';
import {
  ServiceProcess as SharedServiceProcess,
  freshDatabase as sharedFreshDatabase,
  freshVhost as sharedFreshVhost,
  procStat,
  waitFor as sharedWaitFor,
  type WaitOptions,
} from '@trellis/testing/processes';

/**
 * Processes, databases and vhosts for the benchmarks that run Trellis's services for real: the
 * shared helpers of libs/testing/src/processes (the test suites use the same ones), and what only
 * the benchmarks measure (CPU of the servers, memory).
 */

export {
  type FreshDatabase,
  type Memory,
  baseAmqpUrl,
  baseDatabaseUrl,
  freePort,
  memoryOf,
  sleep,
} from '@trellis/testing/processes';

/** Polls `probe` (every 50 ms unless told) until it returns something truthy; the error names `what`. */
export const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>, options: WaitOptions = {}) =>
  sharedWaitFor(what, probe, { everyMs: 50, ...options });

/** An empty database of its own on the local PostgreSQL, dropped by `drop()`. */
export const freshDatabase = (prefix = 'trellis_bench') => sharedFreshDatabase(prefix);
/** A RabbitMQ virtual host of its own (queue names are fixed); needs rabbitmqctl. */
export const freshVhost = (prefix = 'trellis-bench') => sharedFreshVhost(prefix);

/** One of Trellis's programs as a child process, as the benchmarks start it. */
export class ServiceProcess extends SharedServiceProcess {
  constructor(name: string, root: string, args: string[], env: Record<string, string>) {
    super(name, args, env, { cwd: root });
  }

  /**
   * `TRELLIS_BENCH_NODE_ARGS` (space-separated) goes before the entry point of every service, to
   * profile them under a benchmark's load: `--cpu-prof --cpu-prof-dir=/tmp/prof` (BENCHMARKS.md).
   */
  static override entry(name: string, root: string, entry: string, env: Record<string, string>): ServiceProcess {
    const nodeArgs = (process.env.TRELLIS_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    return new ServiceProcess(name, root, [...nodeArgs, `${root}/dist/${entry}`], env);
  }
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

/** CPU seconds so far of each PostgreSQL backend serving the database `db` is connected to (not `db`'s own). */
export async function backendCpu(db: { query: <R>(sql: string) => Promise<{ rows: R[] }> }): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  const out = new Map<number, number>();
  for (const r of rows) {
    const s = cpuSecondsOf(r.pid);
    if (s !== null) out.set(r.pid, s);
  }
  return out;
}

/**
 * Growth of backends' CPU between two readings: backends present at the end count from their first
 * reading (or from 0 when they started in between); backends that exited in between are left out
 * (their last share is lost: a lower bound, never the negative a plain sum gives when one exits).
 */
export function backendCpuGrowth(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}
