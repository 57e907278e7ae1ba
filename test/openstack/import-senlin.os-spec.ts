import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RowDataPacket } from 'mysql2/promise';
import { loadConfig, type OpenStackSettings } from '@trellis/common';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { SENLIN_SERVICE_DEAD_AFTER_S } from '../../cli/import-senlin/import-plan';
import type { ImportReport } from '../../cli/import-senlin/import-senlin';
import { connectSenlin, readSenlin } from '../../cli/import-senlin/senlin-source';
import type { SenlinRows } from '../../cli/import-senlin/senlin-rows';
import { ApiClient, keystoneToken } from '../support/api-client';
import { REAL_CLOUD, assertRealCloudAnswers, cleanupCloud, realCloudClient, realCloudSettings } from './support/real-cloud';

/**
 * Issue 14 end to end: the real Senlin 14 of ../shared/openstack (WITH_SENLIN=1 up.sh) builds a
 * cluster through its own API as the demo user (profile, soft-anti-affinity policy, zone placement
 * weighted az1:az2 = 2:1, deletion policy OLDEST_FIRST, 3 nodes, a webhook receiver); Senlin's
 * engine is stopped; `trellis import-senlin` (the compiled CLI, as an operator runs it) adopts the
 * cluster into a Trellis that is not running (PGlite on disk); Trellis starts on that database with
 * `trellis` as its service user and scales the cluster out by 2 (API) and in by 1 (through the
 * imported webhook URL, pointed at Trellis), on the real Nova.
 *
 * Soft anti-affinity, because five servers cannot be hard anti-affine on the harness's four hosts;
 * what must hold is that every new server joins the server group Senlin made, and that the zones
 * follow the weights counting the imported nodes where Nova says they are.
 */

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SENLIN_URL = process.env.SENLIN_API_URL ?? 'http://127.0.0.1:8777';
const SENLIN_DB = process.env.SENLIN_DB_URL ?? 'mysql://senlin:dbpass@127.0.0.1:3306/senlin';
/** stops/starts Senlin's engine: `<script> stop|start|status`; SENLIN_ENGINE_CTL names another Senlin's (with SENLIN_API_URL and SENLIN_DB_URL) */
const ENGINE = process.env.SENLIN_ENGINE_CTL ?? join(ROOT, 'scripts', 'openstack', 'senlin-engine.sh');
const PREFIX = 'os-import-';
const ACTION_TIMEOUT_MS = 240_000;

const engine = async (verb: 'stop' | 'start' | 'status') => (await run('bash', [ENGINE, verb], { timeout: 150_000 })).stdout.trim();

async function assertSenlinAnswers(): Promise<void> {
  try {
    const res = await fetch(SENLIN_URL, { signal: AbortSignal.timeout(5000) });
    if (res.status >= 500) throw new Error(`answered ${res.status}`);
  } catch (e) {
    throw new Error(
      `Senlin does not answer at ${SENLIN_URL} (${(e as Error).message}): this test needs the real Senlin 14 of ` +
        '../shared/openstack; start it with WITH_SENLIN=1 ../shared/openstack/up.sh (as root) and run npm run test:openstack again',
    );
  }
}

/**
 * Senlin keeps one Keystone trust per user and project (its `credential` table) and, in its API's
 * TrustMiddleware, uses the stored one without asking Keystone whether it still exists. When the
 * trust is gone from Keystone (deleted by hand or by another suite's cleanup, or Keystone's database
 * reset under a Senlin database that outlived it), every request that reaches Nova through Senlin
 * answers 500 "The request you have made requires authentication. (HTTP 401)" and Senlin never makes
 * a new trust (seen in CI). This asks Keystone, as the admin, for every trust Senlin has stored and
 * forgets the ones Keystone no longer has, so that Senlin makes a new one on the next request; it
 * returns what it forgot. Only the harness's Senlin is touched, and only stale rows.
 */
async function forgetSenlinStaleTrusts(): Promise<string[]> {
  const admin = realCloudSettings('admin');
  const token = await keystoneToken(admin.authUrl!, { name: admin.username!, password: admin.password!, project: admin.projectName! });
  const connection = await connectSenlin(new URL(SENLIN_DB));
  const forgotten: string[] = [];
  try {
    const [rows] = await connection.query<RowDataPacket[]>('SELECT `user`, `project`, `cred` FROM `credential`');
    for (const row of rows) {
      const trust = (JSON.parse(String(row.cred)) as { openstack?: { trust?: string } }).openstack?.trust;
      if (!trust) continue;
      const res = await fetch(`${admin.authUrl}/OS-TRUST/trusts/${trust}`, { headers: { 'X-Auth-Token': token } });
      if (res.status === 200) continue;
      if (res.status !== 404) throw new Error(`Keystone GET trust ${trust}: ${res.status} ${await res.text()}`);
      await connection.query('DELETE FROM `credential` WHERE `user` = ? AND `project` = ?', [row.user, row.project]);
      forgotten.push(`trust ${trust} of user ${row.user} in project ${row.project}`);
    }
  } finally {
    await connection.end();
  }
  return forgotten;
}

/** Senlin's REST API as a user: the same request shapes as Trellis's, so the same client. */
async function senlinAs(user: 'demo'): Promise<ApiClient> {
  const s = realCloudSettings(user);
  return new ApiClient(SENLIN_URL, await keystoneToken(s.authUrl!, { name: s.username!, password: s.password!, project: s.projectName! }), '1.10');
}

/**
 * Polls a Senlin action once a second until it ends. Senlin answers 500 now and then on a loaded
 * machine (its conductor's database pool or RPC timing out, seen with other suites using the same
 * Senlin); a few such answers in a row are waited out, not taken for the action's outcome.
 */
async function senlinWait(api: ApiClient, actionId: string): Promise<Record<string, any>> {
  const deadline = Date.now() + ACTION_TIMEOUT_MS;
  let errors = 0;
  let last: unknown = null;
  while (Date.now() < deadline) {
    const res = await api.get(`/v1/actions/${actionId}`);
    if (res.status === 200) {
      errors = 0;
      last = res.body.action;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(res.body.action.status)) return res.body.action;
    } else if (res.status >= 500 && ++errors <= 10) {
      last = res.body;
    } else {
      throw new Error(`Senlin GET action ${actionId}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`Senlin action ${actionId} did not end within ${ACTION_TIMEOUT_MS / 1000} s; last seen ${JSON.stringify(last)}`);
}

/**
 * Creates through Senlin's API. Senlin's API waits 60 s for its conductor's RPC reply and answers
 * 500 MessagingTimeout when none comes (seen once here: the conductor stalled on its Glance lookup
 * after a long idle time, then answered the same request at once); such an answer is tried again,
 * twice at most. Whatever the stalled call made anyway carries the prefix and is swept after the test.
 */
async function senlinCreate(api: ApiClient, kind: 'profiles' | 'policies' | 'clusters' | 'receivers', body: Record<string, unknown>) {
  let res = await api.post(`/v1/${kind}`, body);
  for (let retry = 1; retry <= 2 && res.status >= 500 && JSON.stringify(res.body).includes('MessagingTimeout'); retry++) {
    process.stderr.write(`import-senlin: Senlin ${kind} create answered ${res.status} MessagingTimeout (its conductor did not reply); trying again (${retry} of 2)\n`);
    res = await api.post(`/v1/${kind}`, body);
  }
  if (res.status !== 201 && res.status !== 202) throw new Error(`Senlin ${kind} create: ${res.status} ${JSON.stringify(res.body)}`);
  const key = kind === 'policies' ? 'policy' : kind.slice(0, -1);
  const created = res.body[key];
  if (res.status === 202) {
    const action = await senlinWait(api, ApiClient.actionIdOf(res));
    if (action.status !== 'SUCCEEDED') throw new Error(`Senlin ${kind} create action: ${JSON.stringify(action)}`);
  }
  return created;
}

async function senlinAct(api: ApiClient, cluster: string, body: Record<string, unknown>) {
  const res = await api.post(`/v1/clusters/${cluster}/actions`, body);
  if (res.status !== 202) throw new Error(`Senlin ${Object.keys(body)[0]}: ${res.status} ${JSON.stringify(res.body)}`);
  const action = await senlinWait(api, ApiClient.actionIdOf(res));
  if (action.status !== 'SUCCEEDED') throw new Error(`Senlin ${Object.keys(body)[0]}: ${JSON.stringify(action)}`);
}

/** Deletes (through Senlin, engine running) every Senlin cluster, receiver, policy and profile named with the prefix. */
async function sweepSenlin(api: ApiClient): Promise<string[]> {
  const problems: string[] = [];
  const list = async (kind: string) => ((await api.get(`/v1/${kind}`)).body?.[kind] ?? []).filter((o: { name: string }) => o.name.startsWith(PREFIX));
  for (const r of await list('receivers')) await api.call('DELETE', `/v1/receivers/${r.id}`);
  for (const c of await list('clusters')) {
    const res = await api.call('DELETE', `/v1/clusters/${c.id}`);
    if (res.status !== 202) {
      problems.push(`Senlin cluster ${c.id}: ${res.status} ${JSON.stringify(res.body)}`);
      continue;
    }
    const action = await senlinWait(api, ApiClient.actionIdOf(res)).catch((e) => ({ status: String(e) }));
    if (action.status !== 'SUCCEEDED') problems.push(`Senlin cluster ${c.id} delete: ${JSON.stringify(action)}`);
  }
  for (const p of await list('policies')) await api.call('DELETE', `/v1/policies/${p.id}`);
  for (const p of await list('profiles')) await api.call('DELETE', `/v1/profiles/${p.id}`);
  return problems;
}

function importEnv(dataDir: string): NodeJS.ProcessEnv {
  const trellis = realCloudSettings('trellis');
  return {
    PATH: process.env.PATH,
    TRELLIS_DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    OS_AUTH_URL: trellis.authUrl!,
    OS_USERNAME: trellis.username!,
    OS_PASSWORD: trellis.password!,
    OS_PROJECT_NAME: trellis.projectName!,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: trellis.regionName ?? 'RegionOne',
  };
}

/** the compiled CLI, as an operator runs it, with `trellis` as the service identity; the report as JSON */
async function importSenlin(dataDir: string, ...args: string[]): Promise<{ code: number; report: ImportReport; stderr: string }> {
  const env = importEnv(dataDir);
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'import-senlin', '--from', SENLIN_DB, '--json', ...args], { env, timeout: 300_000 });
    return { code: 0, report: JSON.parse(stdout), stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    if (typeof err.code !== 'number' || !err.stdout) throw new Error(`trellis import-senlin failed: ${err.stderr ?? String(e)}`);
    return { code: err.code, report: JSON.parse(err.stdout), stderr: err.stderr ?? '' };
  }
}

/**
 * After `senlin-engine.sh stop`: waits until the import no longer counts a senlin-engine as alive.
 * A gracefully stopped engine removes its row from Senlin's service table at once. Senlin 14's engine
 * sometimes dies on SIGTERM instead (eventlet's hub: "SystemError: <built-in method switch of
 * GreenThread object> returned NULL without setting an exception" in senlin-engine.log, no
 * "Stopping senlin-engine service" line; seen in CI), leaving its row behind, and the import then
 * refuses, as it should, until the row is SENLIN_SERVICE_DEAD_AFTER_S old. The test does what the
 * refusal tells an operator to do: waits, and says so.
 */
async function untilEngineCountsAsStopped(dataDir: string, clusterId: string): Promise<void> {
  const t0 = Date.now();
  for (let said = false; ; said = true) {
    const { report } = await importSenlin(dataDir, '--cluster', clusterId, '--dry-run');
    if (!report.senlin.engine_alive) break;
    const engines = report.senlin.services.filter((s) => s.binary === 'senlin-engine' && s.alive);
    if (Date.now() - t0 > (SENLIN_SERVICE_DEAD_AFTER_S + 30) * 1000) {
      throw new Error(`senlin-engine still counts as running ${Math.round((Date.now() - t0) / 1000)} s after it was stopped: ${JSON.stringify(engines)}`);
    }
    if (!said) {
      process.stderr.write(
        `senlin-engine stopped without removing its service row (${engines.map((s) => `${s.id}, last report ${s.silent_for_s} s ago`).join('; ')}): ` +
          `waiting until it is ${SENLIN_SERVICE_DEAD_AFTER_S} s old, as the import's refusal says\n`,
      );
    }
    await new Promise((r) => setTimeout(r, 5000));
  }
  if (Date.now() - t0 > 5000) process.stderr.write(`senlin-engine counted as stopped after ${Math.round((Date.now() - t0) / 1000)} s\n`);
}

/** the same, as the operator reads it */
async function importText(dataDir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'import-senlin', '--from', SENLIN_DB, ...args], { env: importEnv(dataDir), timeout: 300_000 });
  return stdout;
}

/** Trellis embedded on the imported database, with the harness's `trellis` user as its service identity. */
async function startTrellis(dataDir: string): Promise<Embedded> {
  const openstack: OpenStackSettings = realCloudSettings('trellis');
  const config = loadConfig({
    TRELLIS_PORT: '0',
    TRELLIS_DATA_DIR: dataDir,
    TRELLIS_POLL_INTERVAL_MS: '250',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    OS_AUTH_URL: openstack.authUrl!,
  });
  return startEmbedded({ ...config, openstack });
}

const WEIGHTS = { az1: 200, az2: 100 };

/**
 * Senlin's zone plan (senlin/policies/zone_placement.py `_create_plan`), restated here so that the
 * test does not take Trellis's own plan for the truth: zones by weight (heaviest first to grow,
 * lightest first to shrink), each up to ceil (grow) or down to floor (shrink) of its share of the
 * new total.
 */
function senlinZonePlan(current: Record<string, number>, count: number, expand: boolean): Record<string, number> {
  const zones = Object.entries(WEIGHTS).sort((a, b) => (expand ? b[1] - a[1] : a[1] - b[1]));
  const sum = zones.reduce((acc, [, w]) => acc + w, 0);
  const total = Object.values(current).reduce((a, b) => a + b, 0) + (expand ? count : -count);
  const plan: Record<string, number> = {};
  let remain = count;
  for (const [zone, weight] of zones) {
    const q = (total * weight) / sum;
    const headroom = expand ? Math.ceil(q) - (current[zone] ?? 0) : (current[zone] ?? 0) - Math.floor(q);
    if (headroom <= 0) continue;
    plan[zone] = Math.min(headroom, remain);
    remain -= plan[zone];
    if (remain === 0) break;
  }
  return plan;
}

const applyPlan = (current: Record<string, number>, plan: Record<string, number>, sign: 1 | -1) => {
  const out = { ...current };
  for (const [zone, n] of Object.entries(plan)) out[zone] = (out[zone] ?? 0) + sign * n;
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n > 0));
};

const countBy = (items: string[]) => items.reduce<Record<string, number>>((acc, k) => ((acc[k] = (acc[k] ?? 0) + 1), acc), {});

describe('trellis import-senlin against the real Senlin 14 and Nova', () => {
  let senlin: ApiClient;
  let dataDir: string;
  let trellis: Embedded | null = null;
  let engineStopped = false;
  const ids = { profile: '', affinity: '', zones: '', deletion: '', cluster: '', receiver: '', group: '' };

  beforeAll(async () => {
    await assertRealCloudAnswers();
    await assertSenlinAnswers();
    if ((await engine('status')) !== 'running') await engine('start');
    const stale = await forgetSenlinStaleTrusts();
    if (stale.length) process.stderr.write(`import-senlin: Senlin's stored Keystone trusts that Keystone no longer has, forgotten so that Senlin makes new ones: ${stale.join('; ')}\n`);
    senlin = await senlinAs('demo');
    const leftovers = await sweepSenlin(senlin);
    if (leftovers.length) process.stderr.write(`import-senlin: leftovers of an earlier run Senlin could not delete: ${leftovers.join('; ')}\n`);
    await cleanupCloud(PREFIX, ['admin', 'demo']);
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-import-senlin-'));
  }, 600_000);

  afterAll(async () => {
    const problems: string[] = [];
    try {
      if (trellis) {
        // Trellis owns the cluster now: it deletes the servers and (not inherited) the server group
        const api = new ApiClient(trellis.url, await tokenOf('demo'));
        if (ids.cluster) {
          const res = await api.call('DELETE', `/v1/clusters/${ids.cluster}`);
          if (res.status === 202) await api.waitForAction(ApiClient.actionIdOf(res), ACTION_TIMEOUT_MS).catch((e) => problems.push(String(e)));
        }
        await trellis.close();
      }
    } finally {
      // Senlin's engine runs again whatever happened, as up.sh leaves it
      if (engineStopped) await engine('start');
      problems.push(...(await sweepSenlin(senlin).catch((e) => [String(e)])));
      await cleanupCloud(PREFIX, ['admin', 'demo']);
      rmSync(dataDir, { recursive: true, force: true });
    }
    if (problems.length) process.stderr.write(`import-senlin cleanup: ${problems.join('; ')}\n`);
  }, 600_000);

  const tokenOf = async (user: 'demo') => {
    const s = realCloudSettings(user);
    return keystoneToken(s.authUrl!, { name: s.username!, password: s.password!, project: s.projectName! });
  };

  it('adopts a cluster Senlin built, then scales it out by 2 and in by 1 with the placement holding', async () => {
    // 1. Senlin builds it, through its own API, as demo
    const t0 = Date.now();
    // Senlin's own engine is the fixture here, and Senlin 14's sometimes fails an action of its own
    // (an eventlet KeyError in its hub, or an RPC that times out: seen on this machine); a build it
    // failed is swept, its engine restarted and the build made once more, said on stderr
    const build = async () => {
      ids.profile = (
        await senlinCreate(senlin, 'profiles', {
          profile: {
            name: `${PREFIX}profile`,
            spec: { type: 'os.nova.server', version: '1.0', properties: { name: `${PREFIX}server`, flavor: REAL_CLOUD.flavor, image: REAL_CLOUD.image, networks: [] } },
          },
        })
      ).id;
      ids.affinity = (
        await senlinCreate(senlin, 'policies', {
          policy: { name: `${PREFIX}affinity`, spec: { type: 'senlin.policy.affinity', version: '1.0', properties: { servergroup: { name: `${PREFIX}group`, policies: 'soft-anti-affinity' } } } },
        })
      ).id;
      ids.zones = (
        await senlinCreate(senlin, 'policies', {
          policy: {
            name: `${PREFIX}zones`,
            spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: Object.entries(WEIGHTS).map(([name, weight]) => ({ name, weight })) } },
          },
        })
      ).id;
      ids.deletion = (
        await senlinCreate(senlin, 'policies', {
          policy: {
            name: `${PREFIX}deletion`,
            spec: { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: 'OLDEST_FIRST', destroy_after_deletion: true, reduce_desired_capacity: true } },
          },
        })
      ).id;
      ids.cluster = (
        await senlinCreate(senlin, 'clusters', {
          cluster: { name: `${PREFIX}cluster`, profile_id: ids.profile, desired_capacity: 0, min_size: 0, max_size: 10, metadata: { team: 'migration' } },
        })
      ).id;
      for (const policy of [ids.affinity, ids.zones, ids.deletion]) await senlinAct(senlin, ids.cluster, { policy_attach: { policy_id: policy } });
      await senlinAct(senlin, ids.cluster, { scale_out: { count: 3 } });
    };
    try {
      await build();
    } catch (e) {
      process.stderr.write(`import-senlin: Senlin failed building the fixture (${String(e).slice(0, 300)}); its engine restarted, built again\n`);
      await engine('stop');
      await engine('start');
      const leftovers = await sweepSenlin(senlin);
      if (leftovers.length) throw new Error(`Senlin failed building the fixture (${String(e)}) and could not sweep it: ${leftovers.join('; ')}`);
      await cleanupCloud(PREFIX, ['admin', 'demo']);
      await build();
    }
    ids.receiver = (
      await senlinCreate(senlin, 'receivers', {
        receiver: { name: `${PREFIX}webhook`, cluster_id: ids.cluster, type: 'webhook', action: 'CLUSTER_SCALE_IN', params: { count: 1 } },
      })
    ).id;
    const senlinNodes: Array<Record<string, any>> = (await senlin.get(`/v1/nodes?cluster_id=${ids.cluster}`)).body.nodes;
    const senlinReceiver = (await senlin.get(`/v1/receivers/${ids.receiver}`)).body.receiver;
    const binding = (await senlin.get(`/v1/clusters/${ids.cluster}/policies/${ids.affinity}`)).body.cluster_policy;
    expect(senlinNodes.map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
    process.stdout.write(`Senlin built the cluster in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${senlinNodes.map((n) => `${n.name} ${n.physical_id}`).join(', ')}\n`);

    // 2. dry run while Senlin's engine runs: the plan, nothing written; a real run is refused
    const dry = await importSenlin(dataDir, '--cluster', ids.cluster, '--dry-run');
    expect(dry.report.senlin.engine_alive).toBe(true);
    expect(dry.report.outcome).toBe('would import');
    const planned = dry.report.units.find((u) => u.id === ids.cluster)!;
    expect(planned.state).toBe('new');
    expect(planned.nodes.map((n) => n.physical_id).sort()).toEqual(senlinNodes.map((n) => n.physical_id).sort());
    expect(planned.receivers).toEqual([expect.objectContaining({ id: ids.receiver, alarm_url: senlinReceiver.channel.alarm_url })]);
    const text = await importText(dataDir, '--cluster', ids.cluster, '--dry-run');
    process.stdout.write(`--- trellis import-senlin --dry-run (Senlin's engine running):\n${text}---\n`);
    expect(text).toContain(`(${ids.cluster}) project ${senlinNodes[0].project}: would be imported`);
    expect(text).toContain(`receiver ${PREFIX}webhook (${ids.receiver}) CLUSTER_SCALE_IN ${senlinReceiver.channel.alarm_url}`);
    const refused = await importSenlin(dataDir, '--cluster', ids.cluster);
    expect(refused.code).toBe(3);
    expect(refused.report.refused).toMatch(/Senlin's engine is running/);

    // 3. the operator stops Senlin's engine; the import, then a second run that finds nothing new
    await engine('stop');
    engineStopped = true;
    await untilEngineCountsAsStopped(dataDir, ids.cluster);
    if (process.env.IMPORT_SENLIN_CAPTURE) captureFixture(await readSenlin(new URL(SENLIN_DB)), ids, process.env.IMPORT_SENLIN_CAPTURE);
    const t1 = Date.now();
    const first = await importSenlin(dataDir, '--cluster', ids.cluster);
    process.stdout.write(`import: exit ${first.code} in ${((Date.now() - t1) / 1000).toFixed(1)} s, totals ${JSON.stringify(first.report.totals)}\n`);
    expect(first.code).toBe(0);
    expect(first.report.outcome).toBe('imported');
    expect(first.report.totals).toEqual({ profiles: 1, policies: 3, clusters: 1, nodes: 3, bindings: 3, receivers: 1 });
    const imported = first.report.units.find((u) => u.id === ids.cluster)!;
    const again = await importSenlin(dataDir, '--cluster', ids.cluster);
    const againText = await importText(dataDir, '--cluster', ids.cluster);
    process.stdout.write(`--- trellis import-senlin, run again:\n${againText}---\n`);
    expect(againText).toMatch(/Nothing new to import: everything selected is already in Trellis\.\n$/);
    expect(again.code).toBe(0);
    expect(again.report.outcome).toBe('nothing new');
    expect(again.report.units.find((u) => u.id === ids.cluster)!.state).toBe('present');

    // every node's zone and host as Nova reports them
    const adminNova = realCloudClient('admin');
    for (const n of imported.nodes) {
      const server = (await adminNova.getServer(n.physical_id!))!;
      expect({ zone: n.zone, host: n.host }).toEqual({ zone: server.availabilityZone, host: server.host });
    }
    ids.group = binding.data?.AffinityPolicy?.data?.servergroup_id ?? '';
    expect(ids.group).not.toBe('');

    // 4. Trellis takes over
    trellis = await startTrellis(dataDir);
    const api = new ApiClient(trellis.url, await tokenOf('demo'));
    const cluster = (await api.get(`/v1/clusters/${ids.cluster}`)).body.cluster;
    expect(cluster).toMatchObject({ id: ids.cluster, name: `${PREFIX}cluster`, status: 'ACTIVE', desired_capacity: 3, metadata: { team: 'migration' } });
    const bindingInTrellis = (await api.get(`/v1/clusters/${ids.cluster}/policies/${ids.affinity}`)).body.cluster_policy;
    expect(bindingInTrellis.data).toEqual(binding.data);
    const receiver = (await api.get(`/v1/receivers/${ids.receiver}`)).body.receiver;
    expect(receiver.channel.alarm_url).toBe(senlinReceiver.channel.alarm_url);

    // the owner has no trust to Trellis yet (Senlin's was to Senlin): the webhook waits for one
    const hook = new URL(senlinReceiver.channel.alarm_url);
    const early = await fetch(`${trellis.url}${hook.pathname}${hook.search}`, { method: 'POST' });
    expect(early.status).toBe(403);

    const out = await act(api, ids.cluster, { scale_out: { count: 2 } });
    expect(out.status).toBe('SUCCEEDED');
    const afterOut = await nodesOf(api, ids.cluster);
    expect(afterOut).toHaveLength(5);
    expect(afterOut.every((n) => n.status === 'ACTIVE')).toBe(true);
    const demoNova = realCloudClient('demo');
    const group = (await demoNova.getServerGroup(ids.group))!;
    // every server, Senlin's and Trellis's, is a member of the group Senlin made
    expect([...group.members].sort()).toEqual(afterOut.map((n) => n.physical_id).sort());
    expect((await demoNova.listServerGroups()).filter((g) => g.name.startsWith(PREFIX)).map((g) => g.id)).toEqual([ids.group]);
    const zonesOut = await zonesOf(afterOut);
    process.stdout.write(`after scale-out by 2: ${describe(afterOut, zonesOut)}\n`);
    // the zones as weighted, the imported nodes counted in the zones Nova put them in
    const importedZones = countBy(imported.nodes.map((n) => n.zone!));
    const grow = senlinZonePlan(importedZones, 2, true);
    expect(countBy([...zonesOut.values()])).toEqual(applyPlan(importedZones, grow, 1));
    const shrink = senlinZonePlan(countBy([...zonesOut.values()]), 1, false);
    process.stdout.write(`zones: imported ${JSON.stringify(importedZones)}, Senlin's plan +${JSON.stringify(grow)} then -${JSON.stringify(shrink)}\n`);

    // 5. scale in by 1 through the webhook URL Senlin gave out, its host pointed at Trellis
    const [shrinkZone] = Object.keys(shrink);
    const inZone = afterOut.filter((n) => zonesOut.get(n.physical_id) === shrinkZone);
    const oldestAt = Math.min(...inZone.map((n) => Date.parse(n.created_at)));
    const res = await fetch(`${trellis.url}${hook.pathname}${hook.search}`, { method: 'POST' });
    expect(res.status).toBe(202);
    const inAction = await api.waitForAction(((await res.json()) as { action: string }).action, ACTION_TIMEOUT_MS);
    expect(inAction.status).toBe('SUCCEEDED');
    expect(inZone.length).toBeGreaterThan(0);
    const afterIn = await nodesOf(api, ids.cluster);
    expect(afterIn).toHaveLength(4);
    const victim = afterOut.find((n) => !afterIn.some((m) => m.id === n.id))!;
    // zone placement chooses the zone, the deletion policy (OLDEST_FIRST) the oldest node there: one Senlin made
    expect(zonesOut.get(victim.physical_id)).toBe(shrinkZone);
    expect(Date.parse(victim.created_at)).toBe(oldestAt);
    expect(senlinNodes.map((n) => n.id)).toContain(victim.id);
    // gone from Nova: not found, or (admin's view in the moment before Nova marks the row deleted) status DELETED,
    // the same rule the nova-worker applies before it reports a node deleted
    expect((await adminNova.getServer(victim.physical_id))?.status ?? 'DELETED').toBe('DELETED');
    const zonesIn = await zonesOf(afterIn);
    expect(countBy([...zonesIn.values()])).toEqual(applyPlan(countBy([...zonesOut.values()]), shrink, -1));
    process.stdout.write(`after scale-in by 1 (webhook): removed ${victim.name} (${victim.physical_id}); ${describe(afterIn, zonesIn)}\n`);
  }, 900_000);

  async function act(api: ApiClient, cluster: string, body: Record<string, unknown>) {
    const res = await api.post(`/v1/clusters/${cluster}/actions`, body);
    if (res.status !== 202) throw new Error(`${Object.keys(body)[0]}: ${res.status} ${JSON.stringify(res.body)}`);
    return api.waitForAction(ApiClient.actionIdOf(res), ACTION_TIMEOUT_MS);
  }

  async function nodesOf(api: ApiClient, clusterId: string): Promise<Array<Record<string, any>>> {
    const res = await api.get(`/v1/nodes?cluster_id=${clusterId}`);
    if (res.status !== 200) throw new Error(`nodes: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.nodes;
  }

  /** physical_id → the zone Nova reports */
  async function zonesOf(nodes: Array<Record<string, any>>): Promise<Map<string, string>> {
    const nova = realCloudClient('admin');
    const out = new Map<string, string>();
    for (const n of nodes) {
      const server = await nova.getServer(n.physical_id);
      out.set(n.physical_id, server?.availabilityZone ?? '?');
      hosts.set(n.physical_id, server?.host ?? '?');
    }
    return out;
  }
  const hosts = new Map<string, string>();

  function describe(nodes: Array<Record<string, any>>, zones: Map<string, string>): string {
    return nodes.map((n) => `${n.name} ${zones.get(n.physical_id)}/${hosts.get(n.physical_id)}`).join(', ');
  }
});

/**
 * IMPORT_SENLIN_CAPTURE=<dir>: writes the rows the importer reads of this test's objects (and
 * Senlin's service table) as rows.json, the fixture of the unit and integration tests
 * (test/fixtures/senlin/).
 */
function captureFixture(rows: SenlinRows, ids: Record<string, string>, dir: string): void {
  const mine = new Set(Object.values(ids).filter(Boolean));
  const nodes = rows.nodes.filter((n) => n.cluster_id === ids.cluster);
  const captured: SenlinRows = {
    profiles: rows.profiles.filter((r) => mine.has(r.id)),
    policies: rows.policies.filter((r) => mine.has(r.id)),
    clusters: rows.clusters.filter((r) => mine.has(r.id)),
    nodes,
    bindings: rows.bindings.filter((r) => r.cluster_id === ids.cluster),
    receivers: rows.receivers.filter((r) => r.cluster_id === ids.cluster),
    actions: rows.actions.filter((r) => r.cluster_id === ids.cluster),
    services: rows.services,
    health: rows.health.filter((r) => r.cluster_id === ids.cluster),
    now: rows.now,
  };
  writeFileSync(join(dir, 'rows.json'), JSON.stringify(captured, null, 2) + '\n');
}
