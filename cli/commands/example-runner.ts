import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { TrellisApi } from './trellis-api';

/**
 * Runs one of the walkthroughs under `examples/<name>/` against a running Trellis through its REST
 * API, exactly as the example's README does it by hand: create the profile and policies from their
 * spec files, a cluster, attach the policies, run the actions, then check where the servers landed
 * against what `example.yaml` says must hold. `trellis example NAME` and the examples test use it.
 */
export interface ExampleFile {
  title: string;
  /** spec file of the profile (as for `openstack cluster profile create --spec-file`) */
  profile: string;
  /** spec files of the policies, attached in this order */
  policies: string[];
  cluster?: { min_size?: number; max_size?: number; desired_capacity?: number };
  /** cluster action bodies, each waited for (e.g. `{scale_out: {count: 3}}`) */
  actions: Array<Record<string, unknown>>;
  expect: {
    nodes: number;
    /** every node on a host of its own */
    distinct_hosts?: boolean;
    /** every node on the same host */
    same_host?: boolean;
    /** nodes per availability zone */
    zones?: Record<string, number>;
  };
}

export interface ExampleNode {
  name: string;
  zone: string;
  host: string;
  servergroup: string | null;
}

export interface ExampleReport {
  name: string;
  title: string;
  cluster: string;
  nodes: ExampleNode[];
  /** what did not hold; empty when the example worked */
  failures: string[];
}

export interface ExampleTarget {
  /** `http://127.0.0.1:8777` */
  apiUrl: string;
  token: string;
  /** remove the cluster, policies and profile afterwards (default true) */
  cleanUp?: boolean;
  timeoutMs?: number;
  log?: (line: string) => void;
  /** shows each action while it runs (`trellis example --watch`) */
  follow?: (actionId: string) => Promise<unknown>;
}

export function examplesDir(root: string): string {
  return join(root, 'examples');
}

/** the examples that have an `example.yaml` */
export function listExamples(root: string): string[] {
  const dir = examplesDir(root);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'example.yaml')))
    .map((d) => d.name)
    .sort();
}

export function readExample(root: string, name: string): { dir: string; example: ExampleFile } {
  const dir = join(examplesDir(root), name);
  const file = join(dir, 'example.yaml');
  if (!existsSync(file)) throw new Error(`no example '${name}' (known: ${listExamples(root).join(', ')})`);
  return { dir, example: parseYaml(readFileSync(file, 'utf8')) as ExampleFile };
}

export async function runExample(root: string, name: string, target: ExampleTarget): Promise<ExampleReport> {
  const { dir, example } = readExample(root, name);
  const log = target.log ?? (() => undefined);
  const api = new TrellisApi(target, log);
  const timeoutMs = target.timeoutMs ?? 120_000;
  const suffix = randomBytes(3).toString('hex');
  const spec = (file: string) => parseYaml(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
  const cluster = `${name}-${suffix}`;

  const profile = (await api.expect(201, 'POST', '/profiles', { profile: { name: `${cluster}-profile`, spec: spec(example.profile) } })).body.profile.id;
  const policies: string[] = [];
  for (const [i, file] of example.policies.entries()) {
    policies.push((await api.expect(201, 'POST', '/policies', { policy: { name: `${cluster}-policy-${i + 1}`, spec: spec(file) } })).body.policy.id);
  }
  const created = await api.expect(202, 'POST', '/clusters', {
    cluster: { name: cluster, profile_id: profile, desired_capacity: 0, min_size: 0, max_size: -1, ...example.cluster },
  });
  const createAction = await api.finished(created.location, timeoutMs);
  if (createAction.status !== 'SUCCEEDED') throw new Error(`cluster create: ${createAction.status}: ${createAction.status_reason}`);
  try {
    for (const policy of policies) await api.act(cluster, { policy_attach: { policy_id: policy } }, timeoutMs);
    for (const body of example.actions) await api.act(cluster, body, timeoutMs);
    const nodes = ((await api.expect(200, 'GET', `/nodes?cluster_id=${cluster}`)).body.nodes as any[]).map(
      (n): ExampleNode => ({
        name: n.name,
        zone: n.data?.placement?.zone ?? '',
        host: n.data?.placement?.host ?? '',
        servergroup: n.data?.placement?.servergroup ?? null,
      }),
    );
    return { name, title: example.title, cluster, nodes, failures: check(example.expect, nodes) };
  } finally {
    if (target.cleanUp ?? true) {
      const deleted = await api.call('DELETE', `/clusters/${cluster}`);
      if (deleted.status === 202) await api.finished(deleted.location, timeoutMs);
      for (const policy of policies) await api.call('DELETE', `/policies/${policy}`);
      await api.call('DELETE', `/profiles/${profile}`);
    }
  }
}

function check(expect: ExampleFile['expect'], nodes: ExampleNode[]): string[] {
  const failures: string[] = [];
  if (nodes.length !== expect.nodes) failures.push(`expected ${expect.nodes} nodes, found ${nodes.length}`);
  const hosts = new Set(nodes.map((n) => n.host));
  if (nodes.some((n) => !n.host)) failures.push('a node has no recorded host');
  if (expect.distinct_hosts && hosts.size !== nodes.length) failures.push(`expected every node on its own host, found ${hosts.size} hosts for ${nodes.length} nodes`);
  if (expect.same_host && hosts.size !== 1) failures.push(`expected every node on one host, found ${hosts.size} hosts`);
  if (expect.zones) {
    const zones: Record<string, number> = {};
    for (const n of nodes) zones[n.zone] = (zones[n.zone] ?? 0) + 1;
    const want = JSON.stringify(Object.entries(expect.zones).sort());
    const got = JSON.stringify(Object.entries(zones).sort());
    if (want !== got) failures.push(`expected nodes per zone ${want}, found ${got}`);
  }
  return failures;
}

/** the report as a table: one line per node */
export function formatReport(report: ExampleReport): string {
  const lines = [`${report.title}`, `cluster ${report.cluster}:`];
  const width = Math.max(4, ...report.nodes.map((n) => n.name.length));
  lines.push(`  ${'node'.padEnd(width)}  zone   host${' '.repeat(10)}server group`);
  for (const n of report.nodes) lines.push(`  ${n.name.padEnd(width)}  ${n.zone.padEnd(5)}  ${n.host.slice(0, 12).padEnd(12)}  ${n.servergroup ?? '-'}`);
  lines.push(report.failures.length ? `NOT AS EXPECTED:\n  ${report.failures.join('\n  ')}` : 'as expected');
  return lines.join('\n');
}
