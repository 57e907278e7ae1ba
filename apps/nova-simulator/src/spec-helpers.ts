import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTopology, type RunningSimulator, type Topology } from './simulator';

/** A tiny HTTP client for the simulator's own specs. */

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** compute microversion, sent as `OpenStack-API-Version: compute X` */
  version?: string;
  headers?: Record<string, string>;
}

export async function call(sim: RunningSimulator, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers['X-Auth-Token'] = o.token;
  if (o.version) headers['OpenStack-API-Version'] = `compute ${o.version}`;
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path.startsWith('http') ? path : sim.url + path, {
    method,
    headers,
    body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
  });
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
  return { status: res.status, headers: res.headers, body };
}

const PASSWORDS: Record<string, string> = { admin: 'admin', demo: 'demo', alt_demo: 'demo', viewer: 'demo', trellis: 'service-secret' };
const HOME_PROJECTS: Record<string, string> = { viewer: 'demo', trellis: 'service' };

export type SimUser = 'admin' | 'demo' | 'alt_demo' | 'viewer' | 'trellis';

/** A project-scoped token for one of the built-in users, scoped to `project` (default: its own). */
export async function login(sim: RunningSimulator, user: SimUser, project: string = HOME_PROJECTS[user] ?? user): Promise<string> {
  const r = await call(sim, 'POST', '/identity/v3/auth/tokens', {
    body: {
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password: PASSWORDS[user] } } },
        scope: { project: { name: project, domain: { id: 'default' } } },
      },
    },
  });
  if (r.status !== 201) throw new Error(`login ${user} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.headers.get('x-subject-token')!;
}

export const IMAGE_REF = 'a83c3c75-fc9c-4be2-aebf-735c080a4c25';

export interface BootOptions {
  token: string;
  name?: string;
  group?: string;
  zone?: string;
  version?: string;
  metadata?: Record<string, unknown>;
  flavorRef?: string;
}

/** POST /servers at 2.64 with networks none; returns the reply. */
export function boot(sim: RunningSimulator, o: BootOptions): Promise<Reply> {
  const server: Record<string, unknown> = { name: o.name ?? 'vm', imageRef: IMAGE_REF, flavorRef: o.flavorRef ?? '1', networks: 'none' };
  if (o.zone !== undefined) server.availability_zone = o.zone;
  if (o.metadata !== undefined) server.metadata = o.metadata;
  const body: Record<string, unknown> = { server };
  if (o.group) body['os:scheduler_hints'] = { group: o.group };
  return call(sim, 'POST', '/compute/v2.1/servers', { token: o.token, version: o.version ?? '2.64', body });
}

/** Boots and returns the server as an admin sees it (buildDelayMs 0 makes it final at once). */
export async function bootAndShow(sim: RunningSimulator, o: BootOptions, adminToken: string): Promise<Reply['body']> {
  const r = await boot(sim, o);
  if (r.status !== 202) throw new Error(`boot failed: ${r.status} ${JSON.stringify(r.body)}`);
  const shown = await call(sim, 'GET', `/compute/v2.1/servers/${r.body.server.id}`, { token: adminToken, version: '2.64' });
  return shown.body.server;
}

export async function createGroup(sim: RunningSimulator, token: string, policy: string, rules?: Record<string, unknown>): Promise<string> {
  const r = await call(sim, 'POST', '/compute/v2.1/os-server-groups', {
    token,
    version: '2.64',
    body: { server_group: { name: `g-${policy}`, policy, ...(rules ? { rules } : {}) } },
  });
  if (r.status !== 200) throw new Error(`group create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.server_group.id;
}

/** The topology of the test/openstack harness (4 hosts, `fake-host-4` on node `fake-drs-cluster-4`). */
export const HARNESS_TOPOLOGY_FILE = join(__dirname, '..', 'topologies', 'openstack-harness.yaml');

export function harnessTopology(): Topology {
  return loadTopology(readFileSync(HARNESS_TOPOLOGY_FILE, 'utf8'));
}

/** Moves the simulator's clock (builds, deletes, tokens) forward. */
export async function advanceClock(sim: RunningSimulator, ms: number): Promise<void> {
  const r = await call(sim, 'POST', '/_sim/clock', { body: { advance_ms: ms } });
  if (r.status !== 200) throw new Error(`clock advance failed: ${r.status} ${JSON.stringify(r.body)}`);
}

/** A capture from the reference cloud (copied from docs/nova-samples). */
export function sample(name: string): any {
  return JSON.parse(readFileSync(join(__dirname, 'samples', name), 'utf8'));
}

/** Every key path of a JSON value (`a.b`, `a.list[]`), to compare shapes without values. */
export function shapeOf(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return [...new Set([`${prefix}[]`, ...value.flatMap((v) => shapeOf(v, `${prefix}[]`))])];
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [`${prefix}${prefix ? '.' : ''}${k}`, ...shapeOf(v, `${prefix}${prefix ? '.' : ''}${k}`)]);
  }
  return [];
}
