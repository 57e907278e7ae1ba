import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNovaSimulator, type RunningSimulator } from '../../apps/nova-simulator/src/simulator';
import { readRunningInstance, removeRunningInstance, writeRunningInstance } from './running-instance';
import { runToken } from './token.command';

/**
 * `trellis token` from a second terminal finds the embedded default's Keystone through the data
 * directory, whatever port the simulator was given (issue 19: it tried 8780 and failed).
 */
describe('trellis token', () => {
  let sim: RunningSimulator;
  let dataDir: string;
  let out: string;
  let err: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
  });
  afterAll(() => sim?.close());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-token-'));
    for (const k of Object.keys(process.env)) if (k.startsWith('OS_') || k === 'SIMULATOR_PORT') delete process.env[k];
    process.env.TRELLIS_DATA_DIR = dataDir;
    // nothing listens there: only the data directory can lead to the simulator
    process.env.SIMULATOR_PORT = '9';
    out = err = '';
    jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
    jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    process.env = { ...saved };
    rmSync(dataDir, { recursive: true, force: true });
  });

  const record = () =>
    writeRunningInstance(dataDir, { pid: process.pid, api_url: 'http://127.0.0.1:1', auth_url: sim.authUrl, started_at: new Date().toISOString() });

  it("prints a token of demo, or of the user asked for, from the Keystone the data directory names", async () => {
    record();
    expect(await runToken([])).toBe(0);
    const demo = out.trim();
    expect(demo).toMatch(/^\S{16,}$/);
    out = '';
    expect(await runToken(['--user', 'alt_demo'])).toBe(0);
    expect(out.trim()).toMatch(/^\S{16,}$/);
    expect(out.trim()).not.toBe(demo);
  });

  it('without a running instance recorded, asks the configured port (and fails there)', async () => {
    await expect(runToken([])).rejects.toThrow();
  });

  it('ignores a record whose process is gone, and refuses an unknown user with status 2', async () => {
    writeRunningInstance(dataDir, { pid: 2 ** 22 + 7, api_url: 'x', auth_url: sim.authUrl, started_at: '' });
    expect(readRunningInstance(dataDir)).toBeNull();
    record();
    expect(await runToken(['--user', 'mallory'])).toBe(2);
    expect(err).toMatch(/--user must be one of demo, alt_demo, viewer, admin/);
  });

  it("removes only its own record", () => {
    record();
    removeRunningInstance(dataDir, process.pid + 1);
    expect(readRunningInstance(dataDir)).not.toBeNull();
    removeRunningInstance(dataDir);
    expect(readRunningInstance(dataDir)).toBeNull();
  });
});
