import * as fs from 'fs';
import * as path from 'path';
import { Memory, ServiceProcess, freePort, sleep, waitFor } from './processes';
import { Api, PROFILE_SPEC, demoToken } from './stack';

/**
 * The embedded default as a user runs it (`npm start`: one process with PGlite, the in-memory bus
 * and the simulator), timed from spawn to a ready /readyz, then put through a demo of scaling
 * actions while its resident memory is sampled.
 */

/**
 * The Node options `npm start` runs the embedded default with: the flags before the entry point in
 * package.json's `start` script, so the benchmark measures what a user gets.
 */
export function startScriptNodeFlags(root: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start ?? '';
  const m = /^node\s+(.*?)\s*dist\/cli\/trellis\.js\s+start\b/.exec(script);
  if (!m) throw new Error(`package.json's start script is not 'node [flags] dist/cli/trellis.js start': '${script}'`);
  return m[1].split(/\s+/).filter((f) => f !== '');
}

export interface EmbeddedRun {
  /** spawn until GET /readyz answered 200 */
  ready_ms: number;
  /** CPU time (user + system, all threads) the process had used when /readyz answered: less bound to the machine's load than ready_ms */
  cpu_at_ready_s: number | null;
  /** VmRSS just after /readyz answered */
  rss_ready_bytes: number;
  /** the most VmRSS seen by sampling every 50 ms during the demo */
  rss_max_sampled_bytes: number;
  /** VmRSS 1 s after the demo's last action finished */
  rss_after_demo_bytes: number;
  /** VmHWM at the end: the most the process was ever resident, start-up included */
  peak_rss_bytes: number;
  actions: number;
  actions_failed: number;
  demo_seconds: number;
  /** what the PGlite log line said about the start (template, cold, warm) when logged */
  pglite_start: string | null;
}

export interface DemoOptions {
  /** actions the demo runs in all (cluster create and policy attach included) */
  actions: number;
  /** checks on clusters left by an earlier run on the same data directory: each must finish ACTIVE */
  checkClusters?: string[];
  /** names this run's cluster */
  label: string;
}

export interface EmbeddedDemoResult extends EmbeddedRun {
  /** the cluster this run created (a later run checks it is still whole) */
  cluster_id: string;
  /** the status each `checkClusters` cluster had after its check */
  checked: Record<string, string>;
}

const ZONE_POLICY = {
  type: 'senlin.policy.zone_placement',
  version: '1.0',
  properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] },
};

/**
 * `node <start flags> dist/cli/trellis.js start` on `dataDir` at default settings (the simulator's
 * build delay included): ready time, then a demo of `actions` actions one after another (create a
 * cluster of 2, attach a zone placement policy, then scale out by 2, check, scale in by 1, ...),
 * then stopped with SIGTERM as Ctrl-C would.
 */
export async function runEmbeddedDemo(root: string, dataDir: string, nodeFlags: string[], options: DemoOptions): Promise<EmbeddedDemoResult> {
  const port = await freePort();
  const p = new ServiceProcess('trellis start', root, [...nodeFlags, path.join(root, 'dist', 'cli', 'trellis.js'), 'start'], {
    TRELLIS_DATA_DIR: dataDir,
    TRELLIS_PORT: String(port),
    SIMULATOR_PORT: String(await freePort()),
    // info: the 'pglite started' line says whether the data directory came from the template
    LOG_LEVEL: 'info',
  }).start();
  const apiUrl = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'trellis start to be ready',
      async () => {
        const res = await fetch(`${apiUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        return res.status === 200;
      },
      { timeoutMs: 120_000, everyMs: 10, alive: () => p.assertRunning() },
    );
    const readyMs = Date.now() - p.startedAt;
    const cpuAtReady = p.cpuSeconds();
    const atReady = mustMemory(p);
    // read now: the process keeps only the tail of its output
    const pgliteStart = /pglite started.*?"start":"(\w+)"/.exec(p.logs())?.[1] ?? null;

    let maxSampled = atReady.rss_bytes;
    const sampler = setInterval(() => {
      const m = p.memory();
      if (m) maxSampled = Math.max(maxSampled, m.rss_bytes);
    }, 50);
    const started = Date.now();
    let actions = 0;
    let failed = 0;
    const checked: Record<string, string> = {};
    let clusterId = '';
    try {
      const running = JSON.parse(fs.readFileSync(path.join(dataDir, 'running.json'), 'utf8')) as { auth_url: string };
      const token = await demoToken(running.auth_url);
      const api = new Api(apiUrl, token);
      const computeUrl = running.auth_url.replace(/\/identity\/v3$/, '/compute/v2.1');
      const act = async (res: Promise<{ headers: Headers; status: number; body: unknown }>) => {
        const action = await api.waitForAction(Api.actionIdOf(await res));
        actions++;
        if (action.status !== 'SUCCEEDED') failed++;
        return action;
      };
      for (const id of options.checkClusters ?? []) {
        await act(api.expect(202, 'POST', `/v1/clusters/${id}/actions`, { check: {} }));
        const status = (await api.expect(200, 'GET', `/v1/clusters/${id}`)).body.cluster.status as string;
        // and each node's server, asked of the simulator itself
        const nodes = (await api.expect(200, 'GET', `/v1/nodes?cluster_id=${id}`)).body.nodes as Array<{ physical_id: string | null }>;
        let missing = 0;
        for (const n of nodes) {
          const res = await fetch(`${computeUrl}/servers/${n.physical_id}`, { headers: { 'X-Auth-Token': token } });
          await res.arrayBuffer();
          if (res.status !== 200) missing++;
        }
        checked[id] = `${status}, ${nodes.length - missing} of ${nodes.length} servers in Nova`;
      }
      const profile = await api.expect(201, 'POST', '/v1/profiles', { profile: { name: `demo-${options.label}`, spec: PROFILE_SPEC } });
      const policy = await api.expect(201, 'POST', '/v1/policies', { policy: { name: `zones-${options.label}`, spec: ZONE_POLICY } });
      const created = api.expect(202, 'POST', '/v1/clusters', {
        cluster: { name: `demo-${options.label}`, profile_id: profile.body.profile.id, desired_capacity: 2, max_size: -1 },
      });
      clusterId = (await created).body.cluster.id;
      await act(created);
      await act(api.expect(202, 'POST', `/v1/clusters/${clusterId}/actions`, { policy_attach: { policy_id: policy.body.policy.id } }));
      const steps = [{ scale_out: { count: 2 } }, { check: {} }, { scale_in: { count: 1 } }];
      for (let i = 0; actions < options.actions; i++) {
        await act(api.expect(202, 'POST', `/v1/clusters/${clusterId}/actions`, steps[i % steps.length]));
      }
    } finally {
      clearInterval(sampler);
    }
    const demoSeconds = (Date.now() - started) / 1000;
    await sleep(1000);
    const after = mustMemory(p);
    return {
      ready_ms: readyMs,
      cpu_at_ready_s: cpuAtReady,
      rss_ready_bytes: atReady.rss_bytes,
      rss_max_sampled_bytes: Math.max(maxSampled, after.rss_bytes),
      rss_after_demo_bytes: after.rss_bytes,
      peak_rss_bytes: after.peak_rss_bytes,
      actions,
      actions_failed: failed,
      demo_seconds: demoSeconds,
      pglite_start: pgliteStart,
      cluster_id: clusterId,
      checked,
    };
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- trellis start output ---\n${p.logs().slice(-3000)}`);
  } finally {
    await p.stop();
  }
}

function mustMemory(p: ServiceProcess): Memory {
  const m = p.memory();
  if (!m) throw new Error('cannot read the resident memory of trellis start (/proc)');
  return m;
}
