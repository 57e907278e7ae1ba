import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceProcess } from './service-process';
import { waitFor } from './wait-for';

export type Role = 'gateway' | 'policy-engine' | 'nova-worker' | 'nova-simulator';

export const ENTRY: Record<Role, string> = {
  gateway: 'apps/gateway/src/main.js',
  'policy-engine': 'apps/policy-engine/src/main.js',
  'nova-worker': 'apps/nova-worker/src/main.js',
  'nova-simulator': 'apps/nova-simulator/src/main.js',
};

/** The line each service logs once it is ready (its consumers are open, or it listens). */
export const READY_LINE: Record<Role, string> = {
  gateway: 'gateway listening',
  'policy-engine': 'policy-engine started',
  'nova-worker': 'nova-worker started',
  'nova-simulator': 'nova simulator listening',
};

export interface TrellisProcessesOptions {
  /** the checkout whose dist/ holds the services */
  root: string;
  /** each process's output is appended to `<logDir>/<name>.log` (restarts append to the same file) */
  logDir: string;
  /** the running processes' ids, rewritten at every start, for a later run to clean up after a crash */
  pidsFile?: string;
  /** the environment of every Trellis service (not the simulator's) */
  env: Record<string, string>;
  simulatorEnv: Record<string, string>;
}

/**
 * A named set of Trellis processes, any number of each role: `gateway-1`, `policy-engine-2`,
 * `nova-worker-3`… Each start gets its own TRELLIS_INSTANCE_ID (`<name>-<n>`, n counting starts),
 * so the leases and the `owner` columns tell the replicas and their incarnations apart. `kill` is
 * SIGKILL; `restart` starts a new process under the same name and waits until it is ready.
 */
export class TrellisProcesses {
  private readonly procs = new Map<string, ServiceProcess>();
  private readonly roles = new Map<string, { role: Role; env: Record<string, string> }>();
  private readonly starts = new Map<string, number>();

  constructor(private readonly o: TrellisProcessesOptions) {}

  /** `env` is this process's own on top of the shared one (e.g. a gateway replica's TRELLIS_PORT) */
  add(name: string, role: Role, env: Record<string, string> = {}): void {
    this.roles.set(name, { role, env });
  }

  get names(): string[] {
    return [...this.roles.keys()];
  }

  named(role: Role): string[] {
    return [...this.roles].filter(([, r]) => r.role === role).map(([name]) => name);
  }

  logFile(name: string): string {
    return join(this.o.logDir, `${name}.log`);
  }

  /** the instance id the latest start of `name` runs under */
  instanceId(name: string): string {
    return `${name}-${this.starts.get(name) ?? 0}`;
  }

  async start(name: string): Promise<void> {
    const entry = this.roles.get(name);
    if (!entry) throw new Error(`no process named ${name}`);
    const n = (this.starts.get(name) ?? 0) + 1;
    this.starts.set(name, n);
    const env = entry.role === 'nova-simulator' ? { ...this.o.simulatorEnv, ...entry.env } : { ...this.o.env, ...entry.env, TRELLIS_INSTANCE_ID: `${name}-${n}` };
    const p = ServiceProcess.entry(name, this.o.root, ENTRY[entry.role], env, { logFile: this.logFile(name) }).start();
    this.procs.set(name, p);
    if (this.o.pidsFile) writeFileSync(this.o.pidsFile, JSON.stringify(this.pids()));
    await waitFor(`${name} to be ready (${this.logFile(name)})`, async () => p.logs().includes(READY_LINE[entry.role]), {
      timeoutMs: 90_000,
      alive: () => p.assertRunning(),
    });
  }

  async kill(name: string): Promise<void> {
    await this.procs.get(name)?.kill();
  }

  /** SIGTERM, as an orchestrator stops a replica (SIGKILL after `graceMs`); resolves once it has exited. */
  async stop(name: string, graceMs = 30_000): Promise<void> {
    await this.procs.get(name)?.stop(graceMs);
  }

  async restart(name: string): Promise<void> {
    await this.kill(name);
    await this.start(name);
  }

  /** SIGTERM to every process still running (SIGKILL after 10 s). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.procs.values()].map((p) => p.stop(10_000)));
  }

  running(name: string): boolean {
    return this.procs.get(name)?.running ?? false;
  }

  /** Processes that ended although the caller did not kill or stop them. */
  exited(killed: readonly string[] = []): string[] {
    return [...this.procs].filter(([name, p]) => !p.running && !killed.includes(name)).map(([name]) => name);
  }

  pids(): number[] {
    return [...this.procs.values()].filter((p) => p.running && p.pid).map((p) => p.pid!);
  }

  /** the last lines a process wrote, for a failure report */
  tail(name: string, chars = 3000): string {
    return this.procs.get(name)?.logs().slice(-chars) ?? '';
  }
}
