import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExampleCommand } from '../../cli/commands/example.command';
import { runWatch } from '../../cli/commands/watch.command';
import { ApiClient } from '../support/api-client';
import { antiAffinitySpec, createPolicy, demoApi, zoneSpec } from '../support/placement.scenario';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * `trellis watch ACTION_ID` against the embedded default, run as a user runs it (its own token from
 * the simulator's Keystone, --api at the gateway) with stdout a pipe: one line per change, the
 * result last, exit status 0 for SUCCEEDED and 1 for FAILED. Servers take as long as the test says:
 * the simulator's builds wait for its clock, which the test moves once it saw the first count.
 */
describe('trellis watch (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  let out: string;
  const saved = { ...process.env };
  const sim = (path: string, body: unknown) =>
    fetch(`${t.trellis.simulator!.url}/_sim${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
    await createProfileAndCluster(api, 'watched');
    await createPolicy(api, 'watched-zones', zoneSpec);
    const attach = await api.post('/v1/clusters/watched/actions', { policy_attach: { policy_id: 'watched-zones' } });
    await api.waitForAction(ApiClient.actionIdOf(attach));
    // `trellis token` finds the simulator's Keystone on SIMULATOR_PORT when no instance is recorded
    process.env.SIMULATOR_PORT = new URL(t.trellis.simulator!.url).port;
    process.env.TRELLIS_DATA_DIR = mkdtempSync(join(tmpdir(), 'trellis-watch-'));
    for (const k of Object.keys(process.env)) if (k.startsWith('OS_')) delete process.env[k];
  }, 60_000);
  afterAll(async () => {
    rmSync(process.env.TRELLIS_DATA_DIR!, { recursive: true, force: true });
    process.env = { ...saved };
    await t?.close();
  });
  beforeEach(() => {
    out = '';
    jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  });
  afterEach(() => jest.restoreAllMocks());

  // three requests a look: well within the project's default rate of 20 a second
  const watch = (actionId: string) => runWatch([actionId, '--api', t.trellis.url, '--interval', '250']);
  /** waits for what the watcher printed, failing with its output if it ends first or nothing comes in 30 s */
  const until = async (seen: () => boolean, watching: Promise<number>) => {
    let ended: string | null = null;
    void watching.then((code) => (ended = `exit status ${code}`), (e) => (ended = `error: ${(e as Error).message}`));
    const deadline = Date.now() + 30_000;
    while (!seen()) {
      if (ended !== null || Date.now() > deadline) throw new Error(`the watcher ${ended ?? 'printed nothing new for 30 s'}; its output:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('follows a scale-out: the nodes planned, then ACTIVE, and exit status 0', async () => {
    expect((await sim('/config', { build_delay_ms: 600_000 })).status).toBe(200);
    const started = await api.post('/v1/clusters/watched/actions', { scale_out: { count: 3 } });
    const watching = watch(ApiClient.actionIdOf(started));
    try {
      await until(() => out.includes('RUNNING CLUSTER_SCALE_OUT: 0/3 ACTIVE, 0 ERROR\n'), watching);
    } finally {
      // the builds end either way, so that a failure here leaves no action holding the cluster for the
      // next test; the delay back first: a server the worker creates between the two calls would
      // otherwise be built with the 600 s delay after the clock moved, and hold the action for 600 s
      await sim('/config', { build_delay_ms: 50 });
      expect((await sim('/clock', { advance_ms: 600_000 })).status).toBe(200);
    }
    expect(await watching).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines).toContain('RUNNING CLUSTER_SCALE_OUT: 0/3 ACTIVE, 0 ERROR');
    expect(lines.slice(-2)).toEqual(['SUCCEEDED CLUSTER_SCALE_OUT: 3/3 ACTIVE, 0 ERROR', 'SUCCEEDED: Cluster scaling succeeded.']);
    // a line only when something changed
    expect(lines.filter((line, i) => line === lines[i - 1])).toEqual([]);
  }, 60_000);

  it('ends with the reason and exit status 1 when the action fails (more anti-affine servers than hosts)', async () => {
    await createPolicy(api, 'watched-apart', antiAffinitySpec('watched-apart'));
    const attach = await api.post('/v1/clusters/watched/actions', { policy_attach: { policy_id: 'watched-apart' } });
    await api.waitForAction(ApiClient.actionIdOf(attach));
    // six hosts: the seventh new server of the group has nowhere to go
    const started = await api.post('/v1/clusters/watched/actions', { scale_out: { count: 7 } });
    expect(await watch(ApiClient.actionIdOf(started))).toBe(1);
    const lines = out.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/^FAILED CLUSTER_SCALE_OUT: \d\/7 ACTIVE, [1-9] ERROR$/);
    expect(lines.at(-1)).toMatch(/^FAILED: .*No valid host was found/);
  }, 60_000);

  it("shows each action of 'trellis example --watch' on stderr, the report on stdout", async () => {
    let err = '';
    jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
    expect(await runExampleCommand(['zone-placement', '--watch', '--api', t.trellis.url])).toBe(0);
    expect(out).toContain('as expected');
    expect(err).toContain('SUCCEEDED CLUSTER_SCALE_OUT: 6/6 ACTIVE, 0 ERROR\nSUCCEEDED: Cluster scaling succeeded.\n');
    expect(err).toContain('SUCCEEDED CLUSTER_SCALE_IN: 3/3 removed\n');
  }, 60_000);

  it('refuses an action of another project as the API does (not found), exit status 1 through the CLI', async () => {
    await expect(watch('00000000-0000-4000-8000-000000000000')).rejects.toThrow("The action '00000000-0000-4000-8000-000000000000' could not be found.");
  });
});
