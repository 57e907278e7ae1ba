import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceProcess, waitFor } from '../support/processes';

export type Role = 'gateway' | 'policy-engine' | 'nova-worker';

const ENTRY: Record<Role | 'nova-simulator', string> = {
  gateway: 'apps/gateway/src/main.js',
  'policy-engine': 'apps/policy-engine/src/main.js',
  'nova-worker': 'apps/nova-worker/src/main.js',
  'nova-simulator': 'apps/nova-simulator/src/main.js',
};

/** The line each service logs once it is ready (its consumers are open, or it listens). */
const READY_LINE: Record<Role | 'nova-simulator', string> = {
  gateway: 'gateway listening',
  'policy-engine': 'policy-engine started',
  'nova-worker': 'nova-worker started',
  'nova-simulator': 'nova simulator listening',
};

/**
 * The Trellis processes of the suite, each started from dist/ with its output appended to
 * `<logDir>/<name>.log` (restarts append to the same file). Services are named `gateway`,
 * `policy-engine-1`, `nova-worker-2`…; `kill` is SIGKILL, `restart` starts a new process under the
 * same name and waits until it is ready.
 */
export class TrellisProcesses {
  private readonly procs = new Map<string, ServiceProcess>();
  private readonly roles = new Map<string, Role | 'nova-simulator'>();
  private readonly starts = new Map<string, number>();

  constructor(
    private readonly logDir: string,
    /** the running processes' ids, rewritten at every start, for the next run to clean up after a crash */
    private readonly pidsFile: string,
    private readonly env: Record<string, string>,
    private readonly simulatorEnv: Record<string, string>,
  ) {}

  add(name: string, role: Role | 'nova-simulator'): void {
    this.roles.set(name, role);
  }

  get names(): string[] {
    return [...this.roles.keys()];
  }

  logFile(name: string): string {
    return join(this.logDir, `${name}.log`);
  }

  async start(name: string): Promise<void> {
    const role = this.roles.get(name)!;
    const n = (this.starts.get(name) ?? 0) + 1;
    this.starts.set(name, n);
    const env = role === 'nova-simulator' ? this.simulatorEnv : { ...this.env, TRELLIS_INSTANCE_ID: `${name}-${n}` };
    const p = new ServiceProcess(name, ENTRY[role], env, this.logFile(name)).start();
    this.procs.set(name, p);
    writeFileSync(this.pidsFile, JSON.stringify(this.pids()));
    await waitFor(
      `${name} to be ready (${this.logFile(name)})`,
      async () => {
        if (!p.running) throw new Error(`${name} exited: ${p.logs().slice(-2000)}`);
        return p.logs().includes(READY_LINE[role]);
      },
      90_000,
    );
  }

  async kill(name: string): Promise<void> {
    await this.procs.get(name)?.kill();
  }

  async restart(name: string): Promise<void> {
    await this.kill(name);
    await this.start(name);
  }

  /** SIGTERM to every process still running (SIGKILL after 10 s). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.procs.values()].map((p) => p.stop()));
  }

  /** Processes that ended without being killed or stopped by the suite (every kill is followed by a restart). */
  exited(): string[] {
    return [...this.procs].filter(([, p]) => !p.running).map(([name]) => name);
  }

  pids(): number[] {
    return [...this.procs.values()].filter((p) => p.running && p.pid).map((p) => p.pid!);
  }

  /** the last lines a process wrote, for a failure report */
  tail(name: string, chars = 3000): string {
    return this.procs.get(name)?.logs().slice(-chars) ?? '';
  }
}
