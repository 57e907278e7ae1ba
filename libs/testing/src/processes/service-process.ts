import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { rss_bytes: kb('VmRSS'), peak_rss_bytes: kb('VmHWM') };
}

/** A process's command name and CPU seconds (user + system) from /proc/<pid>/stat; null when gone. */
export function procStat(pid: number): { comm: string; cpuSeconds: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after "pid (comm) "
    return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
  } catch {
    return null;
  }
}

export interface ServiceProcessOptions {
  /** the working directory: the checkout, whose dist/ holds the entry points */
  cwd: string;
  /** every byte the process prints is appended here too (the last lines stay in memory) */
  logFile?: string;
}

/**
 * One of Trellis's compiled programs as a child process, for the integration tests, the fault and
 * replica suites and the benchmarks alike. Output is kept (the last few hundred chunks) and, when
 * asked, appended to a log file; `kill()` is SIGKILL, `stop()` SIGTERM with SIGKILL after a grace.
 */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private readonly output: string[] = [];
  private exited: Promise<void> | null = null;
  /** when spawn() was called (ms since the epoch) */
  startedAt = 0;

  constructor(
    readonly name: string,
    /** node's arguments: options, then the script and its arguments */
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly options: ServiceProcessOptions,
  ) {}

  /** `dist/<entry>` of the checkout at `root`, with `nodeArgs` (e.g. --cpu-prof) before it */
  static entry(name: string, root: string, entry: string, env: Record<string, string>, extra: { logFile?: string; nodeArgs?: string[] } = {}): ServiceProcess {
    return new ServiceProcess(name, [...(extra.nodeArgs ?? []), join(root, 'dist', entry)], env, { cwd: root, logFile: extra.logFile });
  }

  start(): this {
    this.startedAt = Date.now();
    this.output.length = 0;
    this.child = spawn(process.execPath, this.args, {
      cwd: this.options.cwd,
      // several engines and workers share one machine (and the real cloud's Placement on 8778): each
      // serves /healthz, /readyz and /metrics on a free port unless the caller names one (the gateway
      // serves them on its API port)
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...(/policy-engine|nova-worker/.test(this.args.join(' ')) ? { TRELLIS_OPS_PORT: '0' } : {}),
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      if (this.options.logFile) appendFileSync(this.options.logFile, d);
      this.output.push(d.toString());
      if (this.output.length > 400) this.output.splice(0, 100);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    const child = this.child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    return this;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  memory(): Memory | null {
    return this.running && this.child?.pid ? memoryOf(this.child.pid) : null;
  }

  /** CPU seconds (user + system) the process has used; null when it is not running */
  cpuSeconds(): number | null {
    return this.running && this.child?.pid ? (procStat(this.child.pid)?.cpuSeconds ?? null) : null;
  }

  logs(): string {
    return this.output.join('');
  }

  /** SIGKILL: no shutdown hooks; unacked messages go back to the broker */
  async kill(): Promise<void> {
    await this.signal('SIGKILL', 0);
  }

  /** SIGTERM (the services' orderly shutdown), SIGKILL after `graceMs` */
  async stop(graceMs = 15_000): Promise<void> {
    await this.signal('SIGTERM', graceMs);
  }

  /** fails with the tail of the process's output when it exited */
  assertRunning(): void {
    if (this.child && !this.running) {
      throw new Error(`${this.name} exited (code ${this.child.exitCode}, signal ${this.child.signalCode}):\n${this.logs().slice(-3000)}`);
    }
  }

  private async signal(sig: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const killer = sig === 'SIGKILL' ? null : setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.kill(sig);
    await this.exited;
    if (killer) clearTimeout(killer);
  }
}
