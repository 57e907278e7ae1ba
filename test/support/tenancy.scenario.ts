import { randomBytes, randomUUID } from 'node:crypto';
import { Exchanges, RoutingKeys } from '@trellis/contracts';
import type { MessageBus } from '@trellis/messaging/bus.port';
import { rpcRoutes, type RpcTargets } from '../../apps/gateway/src/rpc/rpc-routes';
import { gatewayRoutes, type RestRoute } from '../../apps/gateway/src/testing/routes';
import type { Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from './api-client';
import { act, createPolicy } from './placement.scenario';
import { createProfileAndCluster, nodesOf } from './scale-out.scenario';
import { TENANCY_MATRIX, type Attempt } from './tenancy.matrix';

/**
 * Issue 12's tenancy matrix, run: project A (the owner) makes one of each object; a member of
 * project B tries every route of TENANCY_MATRIX against them, over REST and RPC, and must get what
 * it would get for objects that do not exist, with nothing of A's in any answer; A's reader reads
 * what A's member reads and changes nothing; A's objects read the same afterwards.
 */

export type Values = Record<string, string>;

/** Someone calling Trellis: a Keystone token of theirs and a REST client with it. */
export interface Party {
  label: string;
  token: string;
  api: ApiClient;
}

export interface Parties {
  /** a member of project A, who owns the objects */
  owner: Party;
  /** a reader of project A */
  reader: Party;
  /** an admin of project A that is not the cloud admin */
  projectAdmin: Party;
  /** a member of project B */
  stranger: Party;
  /** the cloud admin (admin role in the admin project): a stranger to A's objects too */
  admin: Party;
}

/** What a call answered, on either transport: REST's status and body, or the RPC reply's (`{error}` for an error). */
export interface Answer {
  status: number;
  body: any;
}

export interface Call {
  route: RestRoute;
  path: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  key: string | undefined;
}

export interface Transport {
  name: 'REST' | 'RPC';
  /** null: the route has no form on this transport (the webhook, version discovery and probes over RPC) */
  send(party: Party, call: Call): Promise<Answer> | null;
}

export const FORBIDDEN = { code: 403, message: 'You are not authorized to complete this operation.', type: 'Forbidden' };

const label = (r: Pick<RestRoute, 'method' | 'path'>) => `${r.method} ${r.path}`;

/** Every route the gateway serves, as the matrix names it, and the rows naming none. */
export function matrixCoverage(): { missing: string[]; unknown: string[] } {
  const served = gatewayRoutes().map(label);
  return {
    missing: served.filter((r) => !(r in TENANCY_MATRIX)).map((r) => `route ${r} has no tenancy row`),
    unknown: Object.keys(TENANCY_MATRIX).filter((r) => !served.includes(r)).map((r) => `tenancy row ${r} names no route`),
  };
}

// ---------------------------------------------------------------------------------------------
// The estates: A's objects, B's own, and the ghosts (the same shapes, existing nowhere)

/**
 * Project A's objects through A's member: a profile, three policies (zones in the first zone, an
 * anti-affinity group, zones in the second zone), a cluster with two nodes made under the first two
 * and then put under the third, so its `check` finds a zone_imbalance (a finding) on the simulator
 * and on a real cloud alike; a receiver made over RPC and a scale-out made over REST, both with the
 * key `idem`. Answers the values the matrix's templates name.
 */
export async function ownerEstate(owner: Party, bus: MessageBus, prefix: string, timeoutMs: number): Promise<Values> {
  const api = owner.api;
  const name = `${prefix}a-cluster`;
  const { profileId, clusterId } = await createProfileAndCluster(api, name, 0, {}, { name });
  const zone1 = await createPolicy(api, `${prefix}a-zone1`, zones('az1'));
  const apart = await createPolicy(api, `${prefix}a-apart`, {
    type: 'senlin.policy.affinity',
    version: 1.0,
    properties: { servergroup: { name: `${prefix}a-group`, policies: 'anti-affinity' } },
  });
  const zone2 = await createPolicy(api, `${prefix}a-zone2`, zones('az2'));
  const must = async (body: Record<string, unknown>) => expect(await act(api, clusterId, body, timeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
  await must({ policy_attach: { policy_id: zone1 } });
  await must({ policy_attach: { policy_id: apart } });
  const idem = randomUUID();
  const keyed = await api.call('POST', `/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }, { headers: { 'Idempotency-Key': idem } });
  expect(keyed.status).toBe(202);
  const actionId = ApiClient.actionIdOf(keyed);
  expect(await api.waitForAction(actionId, timeoutMs)).toMatchObject({ status: 'SUCCEEDED' });
  await must({ scale_out: { count: 1 } });
  await must({ policy_detach: { policy_id: zone1 } });
  await must({ policy_attach: { policy_id: zone2 } });
  await must({ check: {} });

  const findings = await api.get(`/v1/clusters/${clusterId}/findings`);
  expect(findings.body.findings).toEqual([expect.objectContaining({ kind: 'zone_imbalance', status: 'OPEN' })]);
  const receiverName = `${prefix}a-hook`;
  const hook = { name: receiverName, type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', params: { count: 1 } };
  const receiver = await rpc(bus, owner.token, 'receiver.create', {}, { receiver: hook }, idem);
  expect(receiver.status).toBe(201);
  const nodes = await nodesOf(api, clusterId);
  expect(nodes).toHaveLength(2);
  const events = await api.get(`/v1/events?cluster_id=${clusterId}`);
  const cluster = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster;
  const bindings = (await api.get(`/v1/clusters/${clusterId}/policies`)).body.cluster_policies as Array<Record<string, any>>;
  const group = bindings.find((b) => b.policy_id === apart)!.data.AffinityPolicy.data.servergroup_id as string;
  expect(group).toEqual(expect.any(String));
  return withShortIds({
    profile: profileId,
    'profile.name': `${name}-profile`,
    policy: apart,
    'policy.name': `${prefix}a-apart`,
    cluster: clusterId,
    'cluster.name': name,
    node: nodes[0].id,
    'node.name': nodes[0].name,
    action: actionId,
    event: events.body.events[0].id,
    receiver: receiver.body.receiver.id,
    'receiver.name': receiverName,
    user: cluster.user,
    project: cluster.project,
    group,
    idem,
  });
}

/** Project B's own: a cluster with one node and its scale-out, and webhook receivers on it. */
export async function strangerEstate(stranger: Party, prefix: string, timeoutMs: number): Promise<Values> {
  const api = stranger.api;
  const { profileId, clusterId } = await createProfileAndCluster(api, `${prefix}b-cluster`, 0, {}, { name: `${prefix}b-cluster` });
  const out = await act(api, clusterId, { scale_out: { count: 1 } }, timeoutMs);
  expect(out.status).toBe('SUCCEEDED');
  const receiver = async (action: string) => {
    const res = await api.post('/v1/receivers', { receiver: { name: `${prefix}b-${action.toLowerCase()}`, type: 'webhook', cluster_id: clusterId, action } });
    expect(res.status).toBe(201);
    return res.body.receiver.id as string;
  };
  return {
    'own.profile': profileId,
    'own.cluster': clusterId,
    'own.node': (await nodesOf(api, clusterId))[0].id,
    'own.action': out.id,
    'own.receiver.del': await receiver('CLUSTER_DEL_NODES'),
    'own.receiver.attach': await receiver('CLUSTER_ATTACH_POLICY'),
    'own.receiver.check': await receiver('CLUSTER_CHECK'),
  };
}

const zones = (zone: string) => ({ type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: zone, weight: 100 }] } });

function withShortIds(values: Values): Values {
  for (const kind of ['profile', 'policy', 'cluster', 'node', 'action', 'event', 'receiver']) values[`${kind}.short`] = values[kind].slice(0, 8);
  return values;
}

/** The same keys as A's values, naming objects that exist nowhere. */
export function ghostEstate(a: Values): Values {
  const ghost: Values = {};
  for (const key of Object.keys(a)) {
    if (key.endsWith('.short')) continue;
    if (key.endsWith('.name')) ghost[key] = `ghost-${randomBytes(4).toString('hex')}`;
    else if (key === 'user' || key === 'project') ghost[key] = randomBytes(16).toString('hex');
    else ghost[key] = randomUUID();
  }
  return withShortIds(ghost);
}

/**
 * What A has that no one else may learn: A's objects (ids, names, its project and user, its key),
 * and every other id (UUIDs, Keystone's 32-hex ids, 56-hex hostIds) A's member reads in its lists,
 * decisions and findings that the stranger does not read in its own (the cloud's images, flavors).
 */
export async function secretsOf(owner: Party, stranger: Party, a: Values): Promise<string[]> {
  const ids = (text: string) => new Set(text.match(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{32}\b|\b[0-9a-f]{56}\b/g) ?? []);
  const shared = ids(await everythingOf(stranger));
  const objects = Object.entries(a).filter(([k]) => !k.endsWith('.short')).map(([, v]) => v);
  return [...new Set([...objects, ...[...ids(await everythingOf(owner))].filter((id) => !shared.has(id))])];
}

/** Every list of a project, the decision of each of its actions, and the findings and bindings of each of its clusters. */
async function everythingOf(party: Party): Promise<string> {
  const read = async (path: string) => JSON.stringify((await party.api.get(path)).body);
  const lists = ['/v1/profiles', '/v1/policies', '/v1/clusters', '/v1/nodes?show_details=true', '/v1/actions', '/v1/events', '/v1/receivers'];
  const texts = await Promise.all(lists.map(read));
  const actions = (await party.api.get('/v1/actions')).body.actions as Array<{ id: string }>;
  const clusters = (await party.api.get('/v1/clusters')).body.clusters as Array<{ id: string }>;
  for (const a of actions) texts.push(await read(`/v1/actions/${a.id}/decision`));
  for (const c of clusters) texts.push(await read(`/v1/clusters/${c.id}/findings?status=all`), await read(`/v1/clusters/${c.id}/policies`));
  return texts.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Transports

/** `{cluster}` → the value; in strings, object keys and arrays. */
export function fill<T>(template: T, values: Values): T {
  const text = (s: string) =>
    s.replace(/\{([a-z][a-z.]*)\}/g, (_, key: string) => {
      if (!(key in values)) throw new Error(`the matrix names {${key}}, which the estate has no value for`);
      return values[key];
    });
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]));
    return v;
  };
  return walk(template) as T;
}

export const restTransport: Transport = {
  name: 'REST',
  send: (party, call) => {
    const path = call.route.path.replace(/:([a-z_]+)/g, (_, p: string) => encodeURIComponent(call.path[p]));
    const query = new URLSearchParams(call.query).toString();
    return party.api.call(call.route.method, query ? `${path}?${query}` : path, call.body, call.key ? { headers: { 'Idempotency-Key': call.key } } : {});
  },
};

async function rpc(bus: MessageBus, token: string, pattern: string, params: Record<string, string>, body: unknown, messageId?: string): Promise<Answer> {
  const reply = (await bus.request(
    { token, microversion: '1.14', params, body },
    { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern, timeoutMs: 30_000, ...(messageId ? { messageId } : {}) },
  )) as { status: number; body?: unknown; error?: unknown };
  return { status: reply.status, body: reply.error ? { error: reply.error } : reply.body };
}

/** The RPC pattern of each REST call (`POST /v1/clusters/{cluster_id}/actions {"scale_out": ...}` → cluster.scale_out). */
const PATTERNS = new Map([...rpcRoutes({} as RpcTargets)].map(([pattern, r]) => [r.rest, pattern]));
export const RPC_PATTERNS: readonly string[] = [...PATTERNS.values()];

export function patternOf(call: Pick<Call, 'route' | 'body'>): string | null {
  const rest = `${call.route.method} ${call.route.path.replace(/:([a-z_]+)/g, '{$1}')}`;
  const key = call.body && typeof call.body === 'object' ? Object.keys(call.body)[0] : undefined;
  return PATTERNS.get(rest) ?? PATTERNS.get(`${rest} {"${key}": ...}`) ?? null;
}

export function rpcTransport(bus: MessageBus): Transport {
  return {
    name: 'RPC',
    send: (party, call) => {
      const pattern = patternOf(call);
      return pattern === null ? null : rpc(bus, party.token, pattern, { ...call.path, ...call.query }, call.body ?? null, call.key);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The run

export interface MatrixRun {
  /** calls naming A's objects made as another project: B's member or the cloud admin */
  attempts: number;
  /** every call but the comparisons with objects that do not exist, by party */
  calls: Map<string, number>;
  /** what went wrong, one line each; empty when the tenancy holds */
  problems: string[];
  /** RPC patterns the run used */
  patterns: Set<string>;
  /** routes x parties tried, as `REST GET /v1/clusters/:cluster_id as alt_demo` */
  tried: Set<string>;
}

export interface MatrixEstates {
  a: Values;
  ghost: Values;
  own: Values;
  secrets: string[];
}

const templatesIn = (attempt: Attempt) => JSON.stringify([attempt.path, attempt.query, attempt.body, attempt.key]).match(/\{[a-z][a-z.]*\}/g) ?? [];
const namesA = (attempt: Attempt) => templatesIn(attempt).some((t) => !t.startsWith('{own.'));
const namesOwn = (attempt: Attempt) => templatesIn(attempt).some((t) => t.startsWith('{own.'));

/** An answer with every value of the estate written as its template, so A's and the ghosts' answers compare. */
function normalised(answer: Answer, values: Values): string {
  let text = JSON.stringify(answer);
  for (const [key, value] of Object.entries(values).sort(([, x], [, y]) => y.length - x.length)) text = text.split(value).join(`{${key}}`);
  return text;
}

/** Runs every row of the matrix on one transport; never throws for a wrong answer, it collects them. */
export async function runMatrix(transport: Transport, parties: Parties, estates: MatrixEstates, run: MatrixRun, routes = gatewayRoutes()): Promise<void> {
  const { a, ghost, own, secrets } = estates;
  const withOwn = (v: Values) => ({ ...v, ...own });
  for (const route of routes) {
    for (const [i, attempt] of (TENANCY_MATRIX[label(route)] ?? []).entries()) {
      const where = `${transport.name} ${label(route)} #${i + 1}`;
      const callOf = (values: Values): Call => ({
        route,
        path: fill(attempt.path ?? {}, withOwn(values)),
        query: fill(attempt.query ?? {}, withOwn(values)),
        body: fill(attempt.body, withOwn(values)),
        key: attempt.key === undefined ? undefined : fill(attempt.key, withOwn(values)),
      });
      const call = callOf(a);
      const asked = JSON.stringify([call.path, call.query, call.body, call.key]);
      const send = async (party: Party, c = call): Promise<Answer | null> => {
        const answer = await transport.send(party, c);
        if (answer === null) return null;
        if (c === call) {
          run.calls.set(party.label, (run.calls.get(party.label) ?? 0) + 1);
          if ((party === parties.stranger || party === parties.admin) && namesA(attempt)) run.attempts++;
        }
        run.tried.add(`${transport.name} ${label(route)} as ${party.label}`);
        if (transport.name === 'RPC') run.patterns.add(patternOf(c)!);
        return answer;
      };
      const problem = (who: Party, text: string, answer?: Answer) =>
        run.problems.push(`${where} as ${who.label} (${asked}): ${text}${answer ? `; got ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}` : ''}`);
      const refused = (answer: Answer | null) => answer?.status === 403 && JSON.stringify(answer.body?.error) === JSON.stringify(FORBIDDEN);
      const leaks = (answer: Answer) => secrets.filter((s) => !asked.includes(s) && JSON.stringify(answer.body).includes(s));
      const judge = async (who: Party) => {
        const answer = await send(who);
        if (answer === null) return;
        const message = attempt.message === undefined ? undefined : fill(attempt.message, withOwn(a));
        if (answer.status !== attempt.status) problem(who, `expected ${attempt.status}`, answer);
        else if (message !== undefined && answer.body?.error?.message !== message) problem(who, `expected the message "${message}"`, answer);
        else if (attempt.status === 403 && !refused(answer)) problem(who, "expected Senlin's 403", answer);
        const leaked = leaks(answer);
        if (leaked.length) problem(who, `answer holds A's ${leaked.join(', ')}`, answer);
        if (!namesA(attempt)) return;
        const unknown = await send(who, callOf(ghost));
        if (unknown && normalised(answer, withOwn(a)) !== normalised(unknown, withOwn(ghost))) {
          problem(who, `answers differently than for objects that do not exist (${unknown.status} ${JSON.stringify(unknown.body).slice(0, 200)})`, answer);
        }
      };

      // B's member; the cloud admin, outside global_project and replay, where the row names only A's objects
      await judge(parties.stranger);
      if (!route.public && !attempt.adminOnly && !namesOwn(attempt)) await judge(parties.admin);
      if (route.public) continue;

      // A's member: its own objects are there (the control); admin-only calls are refused to it, and to A's admin
      const reads = route.method === 'GET';
      const mine = reads || attempt.adminOnly ? await send(parties.owner) : null;
      if (attempt.adminOnly) {
        if (!refused(mine)) problem(parties.owner, 'expected 403 for a member of the project', mine ?? undefined);
        const theirs = await send(parties.projectAdmin);
        if (!refused(theirs)) problem(parties.projectAdmin, 'expected 403 for an admin of the project', theirs ?? undefined);
      }
      if (mine && attempt.owner !== undefined) {
        if (mine.status !== attempt.owner) problem(parties.owner, `expected ${attempt.owner} for the owner`, mine);
        else if (attempt.owner === 200 && attempt.sees !== false && leaks(mine).length === 0) problem(parties.owner, 'the owner sees none of its objects', mine);
      }
      // A's reader reads what A's member reads, and changes nothing
      const seen = await send(parties.reader);
      if (seen === null) continue;
      if (reads && mine && JSON.stringify(seen) !== JSON.stringify(mine)) problem(parties.reader, `expected the member's answer ${mine.status}`, seen);
      if (!reads && !refused(seen)) problem(parties.reader, "expected Senlin's 403", seen);
    }
  }
}

/** A's objects as A's member reads them: what the matrix must leave as it was. */
export async function ownerView(owner: Party, a: Values): Promise<unknown> {
  const paths = [
    `/v1/profiles/${a.profile}`,
    `/v1/policies/${a.policy}`,
    `/v1/clusters/${a.cluster}`,
    `/v1/clusters/${a.cluster}/policies`,
    `/v1/clusters/${a.cluster}/findings?status=all`,
    `/v1/nodes?cluster_id=${a.cluster}&show_details=true`,
    `/v1/actions?cluster_id=${a.cluster}`,
    `/v1/actions/${a.action}/decision`,
    `/v1/events?cluster_id=${a.cluster}`,
    `/v1/receivers/${a.receiver}`,
  ];
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const res = await owner.api.get(path);
    out[path] = { status: res.status, body: res.body };
  }
  return out;
}

/** B's webhook (its receiver id is its credential) starts B's action on B's cluster, as B. */
export async function ownWebhookFiresAtHome(url: string, parties: Parties, { own }: MatrixEstates): Promise<void> {
  const res = await fetch(`${url}/v1/webhooks/${own['own.receiver.check']}/trigger?V=2`, { method: 'POST' });
  expect(res.status).toBe(202);
  const action = await parties.stranger.api.waitForAction(((await res.json()) as { action: string }).action);
  const cluster = (await parties.stranger.api.get(`/v1/clusters/${own['own.cluster']}`)).body.cluster;
  expect(action).toMatchObject({ action: 'CLUSTER_CHECK', target: own['own.cluster'], project: cluster.project, user: cluster.user });
}

/**
 * B's profile names A's server group in `scheduler_hints.group`: an affinity policy cannot inherit
 * it (B's decisions see B's groups only), and a server cannot be booted into it (Nova, asked with
 * B's trust, does not know it). Both actions fail and A's group keeps its members.
 */
export async function foreignServerGroupRefused(
  parties: Parties,
  { a }: MatrixEstates,
  options: { prefix: string; timeoutMs: number; membersOf(groupId: string): Promise<string[]> },
): Promise<void> {
  const { prefix, timeoutMs } = options;
  const api = parties.stranger.api;
  const { clusterId } = await createProfileAndCluster(api, `${prefix}b-hinted`, 0, {}, { name: `${prefix}b-hinted`, scheduler_hints: { group: a.group } });
  const inherit = await createPolicy(api, `${prefix}b-inherit`, { type: 'senlin.policy.affinity', version: 1.0, properties: { servergroup: { policies: 'anti-affinity' } } });
  const attach = await act(api, clusterId, { policy_attach: { policy_id: inherit } }, timeoutMs);
  expect(attach).toMatchObject({ status: 'FAILED' });
  expect(attach.status_reason).toContain(a.group);
  expect((await api.get(`/v1/clusters/${clusterId}/policies`)).body.cluster_policies).toEqual([]);
  const members = await options.membersOf(a.group);
  expect(members).toHaveLength(2);
  const out = await act(api, clusterId, { scale_out: { count: 1 } }, timeoutMs);
  expect(out).toMatchObject({ status: 'FAILED' });
  expect(out.status_reason).toContain('could not be found');
  expect(await options.membersOf(a.group)).toEqual(members);
}

export const newRun = (): MatrixRun => ({ attempts: 0, calls: new Map(), problems: [], patterns: new Set(), tried: new Set() });

type Who = keyof Parties;
export const PARTY_LABELS: Record<Who, string> = {
  owner: 'member of A',
  reader: 'reader of A',
  projectAdmin: 'admin of A',
  stranger: 'member of B',
  admin: 'cloud admin',
};

/** A Trellis running for the suite, with the cloud's users for each party. */
export interface TenancyStack {
  trellis: Embedded;
  authUrl: string;
  users: Record<Who, { name: string; password: string; project: string }>;
  /** the members of a server group, as Nova shows them to A's member */
  membersOf(groupId: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The tenancy suite, written once: on the simulator (test/e2e/tenancy.e2e-spec.ts) and on the real
 * Keystone and Nova with Trellis on RabbitMQ and PostgreSQL (test/openstack/tenancy.os-spec.ts).
 * With TENANCY_SUMMARY set it prints the figures of each run (docs/RELIABILITY.md §12).
 */
export function describeTenancy(options: { title: string; prefix: string; actionTimeoutMs: number; setupTimeoutMs: number; start(): Promise<TenancyStack> }): void {
  describe(options.title, () => {
    let stack: TenancyStack;
    let parties: Parties;
    let estates: MatrixEstates;
    let before: unknown;
    const runs: Record<string, MatrixRun> = {};

    beforeAll(async () => {
      stack = await options.start();
      const entries = await Promise.all(
        (Object.keys(PARTY_LABELS) as Who[]).map(async (who): Promise<[Who, Party]> => {
          const token = await keystoneToken(stack.authUrl, stack.users[who]);
          return [who, { label: `${stack.users[who].name} (${PARTY_LABELS[who]})`, token, api: new ApiClient(stack.trellis.url, token) }];
        }),
      );
      parties = Object.fromEntries(entries) as unknown as Parties;
      const a = await ownerEstate(parties.owner, stack.trellis.infra.bus, options.prefix, options.actionTimeoutMs);
      const own = await strangerEstate(parties.stranger, options.prefix, options.actionTimeoutMs);
      estates = { a, own, ghost: ghostEstate(a), secrets: await secretsOf(parties.owner, parties.stranger, a) };
      before = await ownerView(parties.owner, a);
    }, options.setupTimeoutMs);

    afterAll(async () => {
      if (process.env.TENANCY_SUMMARY) {
        for (const [name, run] of Object.entries(runs)) {
          const calls = [...run.calls].map(([who, n]) => `${who} ${n}`).join(', ');
          console.log(`${options.title}, ${name}: ${run.attempts} cross-project attempts naming A's objects, ${run.tried.size} route x party pairs, calls: ${calls}; ${run.problems.length} wrong`);
        }
      }
      await stack?.close();
    }, options.setupTimeoutMs);

    it('has a tenancy row for every route the gateway serves', () => {
      const { missing, unknown } = matrixCoverage();
      expect([...missing, ...unknown]).toEqual([]);
    });

    it.each([
      ['REST', () => restTransport],
      ['RPC', () => rpcTransport(stack.trellis.infra.bus)],
    ])('over %s: 404 for every object of another project, lists without them, 403 for cloud-admin calls; the reader only reads', async (name, transport) => {
      const run = (runs[name] = newRun());
      await runMatrix(transport(), parties, estates, run);
      expect(run.problems).toEqual([]);
      expect(run.attempts).toBeGreaterThan(150);
      if (name === 'RPC') expect(RPC_PATTERNS.filter((p) => !run.patterns.has(p)).map((p) => `pattern ${p} has no tenancy row`)).toEqual([]);
    }, 600_000);

    it("a receiver's webhook starts its action on its own cluster, as its owner", () => ownWebhookFiresAtHome(stack.trellis.url, parties, estates), options.setupTimeoutMs);

    it("another project's server group, named in a profile, is neither inherited nor booted into", () =>
      foreignServerGroupRefused(parties, estates, { prefix: options.prefix, timeoutMs: options.actionTimeoutMs, membersOf: (id) => stack.membersOf(id) }),
      options.setupTimeoutMs);

    it('leaves every object of the project as it was', async () => {
      expect(await ownerView(parties.owner, estates.a)).toEqual(before);
    });
  });
}
