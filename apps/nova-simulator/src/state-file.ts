import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage, type Logger } from '@trellis/common';
import type { PersistedSimulatorState, SimulatorState } from './simulator-state';

/**
 * The simulator's state in a file, so the servers Trellis's database points at are still there after
 * a restart (the embedded default keeps it in its data directory, `nova-simulator.json`; the
 * stand-alone simulator where SIMULATOR_STATE_FILE says). Every request that may change something
 * (any method but GET and HEAD) schedules a save; saves are debounced and written whole to a
 * temporary file then renamed, so the file is always one complete state.
 */

const FORMAT = 'trellis-nova-simulator-state/1';

/** How long after a change the state is written: one write for a burst of requests. */
const DEBOUNCE_MS = 200;

interface FileBody {
  format: string;
  saved_at: string;
  state: PersistedSimulatorState;
}

export class StateFileError extends Error {}

export class SimulatorStateFile {
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly state: SimulatorState,
    private readonly logger: Logger,
  ) {}

  /**
   * Loads the file into the state when there is one; returns how many servers it held (null: no
   * file). A file that is not a saved state stops the start, naming the file, rather than being
   * replaced by an empty cloud.
   */
  load(): number | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StateFileError(`cannot read the simulator's state file ${this.path}: ${errorMessage(e)}`);
    }
    const saved = parseStateFile(text, this.path);
    this.state.importState(saved);
    return saved.servers.length;
  }

  /** A request may have changed the state: save it soon. */
  changed(): void {
    if (this.closed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.save();
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  /** Writes a pending save now and takes no more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
      this.save();
    }
  }

  private save(): void {
    const body: FileBody = { format: FORMAT, saved_at: new Date().toISOString(), state: this.state.exportState() };
    const tmp = `${this.path}.tmp-${process.pid}`;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      writeFileSync(tmp, JSON.stringify(body));
      renameSync(tmp, this.path);
    } catch (e) {
      // the simulator keeps serving from memory; the next change tries again
      rmSync(tmp, { force: true });
      this.logger.warn('nova simulator: cannot save its state', { file: this.path, error: errorMessage(e) });
    }
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The saved state in `text`, or a StateFileError naming the file and what is wrong. */
export function parseStateFile(text: string, path: string): PersistedSimulatorState {
  const fail = (what: string) =>
    new StateFileError(`the simulator's state file ${path} ${what}; move it away to start with an empty cloud`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw fail(`is not JSON (${errorMessage(e)})`);
  }
  if (!isRecord(body) || body.format !== FORMAT) throw fail(`is not a saved state in the format '${FORMAT}'`);
  const state = body.state;
  if (!isRecord(state)) throw fail("has no 'state' object");
  const list = (v: unknown, field: string, check: (item: Record<string, unknown>) => boolean) => {
    if (!Array.isArray(v) || !v.every((item) => isRecord(item) && check(item))) throw fail(`has a bad '${field}' list`);
  };
  const id = (item: Record<string, unknown>) => typeof item.id === 'string';
  list(state.servers, 'state.servers', (s) => id(s) && typeof s.instanceNumber === 'number' && typeof s.createdAt === 'number' && isRecord(s.flavor));
  list(state.server_groups, 'state.server_groups', (g) => id(g) && Array.isArray(g.members));
  if (typeof state.instance_counter !== 'number') throw fail("has no number 'state.instance_counter'");
  const identity = state.identity;
  if (!isRecord(identity)) throw fail("has no 'state.identity' object");
  list(identity.tokens, 'state.identity.tokens', (t) => id(t) && typeof t.expiresAt === 'number');
  list(identity.trusts, 'state.identity.trusts', id);
  list(identity.application_credentials, 'state.identity.application_credentials', id);
  return state as unknown as PersistedSimulatorState;
}
