import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a running embedded default says about itself in its data directory (`running.json`), so that
 * `trellis token` from another terminal in the same directory finds the simulator's Keystone
 * whatever ports `npm start` was given (TRELLIS_PORT, SIMULATOR_PORT).
 */
export interface RunningInstance {
  pid: number;
  /** `http://127.0.0.1:8777` */
  api_url: string;
  /** the built-in Keystone, `http://127.0.0.1:8780/identity/v3` */
  auth_url: string;
  started_at: string;
}

const FILE = 'running.json';

export function writeRunningInstance(dataDir: string, instance: RunningInstance): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, FILE), JSON.stringify(instance, null, 2) + '\n');
}

/** Removes the file if it is this process's (a second start may have replaced it). */
export function removeRunningInstance(dataDir: string, pid = process.pid): void {
  if (readRunningInstance(dataDir, () => true)?.pid === pid) rmSync(join(dataDir, FILE), { force: true });
}

/** The instance recorded in the data directory, or null when there is none or its process is gone. */
export function readRunningInstance(dataDir: string, alive: (pid: number) => boolean = isAlive): RunningInstance | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8'));
  } catch {
    return null;
  }
  const r = parsed as Partial<RunningInstance>;
  if (typeof r?.pid !== 'number' || typeof r.auth_url !== 'string' || typeof r.api_url !== 'string') return null;
  return alive(r.pid) ? (r as RunningInstance) : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
