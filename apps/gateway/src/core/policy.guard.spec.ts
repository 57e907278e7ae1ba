import { DEFAULT_RULES, OPERATION_RULES } from '@trellis/authz';
import { silentLogger } from '@trellis/common';
import { ActionEntity, CloudFactEntity, ClusterPolicyEntity, DecisionEntity, EventEntity } from '@trellis/persistence';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { clusterActionOperations } from '../clusters/cluster-action-operations';
import { CLUSTER_ACTION_KEYS, rpcRoutes, type RpcTargets } from '../rpc/rpc-routes';
import { authenticatedRoutes, type RestRoute } from '../testing/routes';
import { NOVA_PROFILE_SPEC, PROJECT_A, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';
import { operationsOf } from './policy.guard';

const KNOWN = new Set(DEFAULT_RULES.map((r) => r.name));
const ROUTES = authenticatedRoutes();
// GET /v1/services lists Trellis's own processes: the cloud admin's (services/services.spec.ts)
const READS = ROUTES.filter((r) => r.method === 'GET' && r.path !== '/v1/services');
const WRITES = ROUTES.filter((r) => r.method !== 'GET');
const label = (r: RestRoute) => `${r.method} ${r.path}`;
const FORBIDDEN = {
  code: 403,
  title: 'Forbidden',
  explanation: 'Access was denied to this resource.',
  error: { code: 403, message: 'You are not authorized to complete this operation.', type: 'Forbidden' },
};
const ZONES = { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }] } };

/** Objects of project A for every path parameter, made by its member (alice). */
interface Fixtures {
  ids: Record<string, string>;
  /** an action still READY (replayable) */
  readyAction: string;
}

async function makeFixtures(h: GatewayHarness): Promise<Fixtures> {
  const alice = h.as(TOKENS.alice, '1.14');
  const ds = h.db.dataSource;
  await ds.getRepository(CloudFactEntity).save({ kind: 'availability_zones', data: { items: ['az1', 'az2'] }, fetched_at: new Date() });
  const profile = await alice.post('/v1/profiles', { profile: { name: 'rbac-p', spec: NOVA_PROFILE_SPEC } });
  expect(profile.status).toBe(201);
  const policy = await alice.post('/v1/policies', { policy: { name: 'rbac-zones', spec: ZONES } });
  expect(policy.status).toBe(201);
  const cluster = await alice.post('/v1/clusters', { cluster: { name: 'rbac-c', profile_id: profile.body.profile.id, max_size: 5 } });
  expect(cluster.status).toBe(202);
  const createAction = cluster.headers.location.split('/actions/')[1];
  await ds.getRepository(ActionEntity).update({ id: createAction }, { status: 'SUCCEEDED' });
  const clusterId = cluster.body.cluster.id as string;
  await ds.getRepository(ClusterPolicyEntity).insert({
    id: randomUUID(),
    cluster_id: clusterId,
    policy_id: policy.body.policy.id,
    enabled: true,
    priority: 100,
    data: {},
    last_op: new Date(),
    attached_at: new Date(),
  });
  const node = await alice.post('/v1/nodes', { node: { name: 'rbac-n', profile_id: profile.body.profile.id } });
  expect(node.status).toBe(202);
  const eventId = randomUUID();
  await ds.getRepository(EventEntity).insert({
    id: eventId,
    timestamp: new Date(),
    oid: clusterId,
    oname: 'rbac-c',
    otype: 'CLUSTER',
    cluster_id: clusterId,
    level: 20,
    user: 'alice-id',
    project: PROJECT_A,
    action: 'CLUSTER_CREATE',
    status: 'start',
    status_reason: 'Cluster creation started',
    meta_data: {},
  });
  await ds.getRepository(DecisionEntity).insert({
    action_id: createAction,
    hook: 'pre_op',
    input: {},
    output: {},
    plan: {},
    trace: [],
    created_at: new Date(),
  });
  const receiver = await alice.post('/v1/receivers', {
    receiver: { name: 'rbac-r', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT' },
  });
  expect(receiver.status).toBe(201);
  return {
    ids: {
      receiver_id: receiver.body.receiver.id,
      profile_id: profile.body.profile.id,
      policy_id: policy.body.policy.id,
      cluster_id: clusterId,
      node_id: node.body.node.id,
      action_id: createAction,
      event_id: eventId,
    },
    readyAction: node.headers.location.split('/actions/')[1],
  };
}

/** A concrete URL for a route: project A's objects, and the one profile and policy type. */
function urlOf(route: RestRoute, f: Fixtures): string {
  const typeName = route.path.startsWith('/v1/profile-types') ? 'os.nova.server-1.0' : 'senlin.policy.zone_placement-1.0';
  return route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
    if (name === 'type_name') return typeName;
    if (name === 'path') return 'name';
    const id = f.ids[name];
    if (!id) throw new Error(`no fixture for :${name} in ${route.path}`);
    return id;
  });
}

function send(h: GatewayHarness, token: string, route: RestRoute, url: string, body: unknown = {}) {
  const c = h.as(token, '1.14');
  switch (route.method) {
    case 'GET':
      return c.get(url);
    case 'POST':
      return c.post(url, body);
    case 'PATCH':
      return c.patch(url, body);
    case 'DELETE':
      return c.delete(url);
    default:
      throw new Error(`no client for ${route.method}`);
  }
}

describe('policy rules per operation', () => {
  it('finds the routes it checks', () => {
    expect(READS.length).toBeGreaterThanOrEqual(20);
    expect(WRITES.length).toBeGreaterThanOrEqual(15);
  });

  it('guards every authenticated REST route with rules that exist', () => {
    const missing = ROUTES.filter((r) => r.operation === undefined).map(label);
    expect(missing).toEqual([]);
    for (const route of ROUTES) {
      const names = typeof route.operation === 'string' ? [route.operation] : CLUSTER_ACTION_KEYS.flatMap((k) => [
        ...operationsOf(route.operation!, { query: {}, body: { [k]: {} } }),
        ...operationsOf(route.operation!, { query: { dry_run: 'true' }, body: { [k]: {} } }),
      ]);
      for (const name of names) expect({ route: label(route), name, known: KNOWN.has(name) }).toMatchObject({ known: true });
    }
  });

  it('guards every RPC pattern with the rules of the REST route it stands for', () => {
    const routes = rpcRoutes({} as RpcTargets);
    const restByLabel = new Map(ROUTES.map((r) => [`${r.method} ${r.path.replace(/:([a-z_]+)/g, '{$1}')}`, r]));
    for (const [pattern, route] of routes) {
      const key = pattern.startsWith('cluster.') && (CLUSTER_ACTION_KEYS as readonly string[]).includes(pattern.slice(8)) ? pattern.slice(8) : null;
      const rest = restByLabel.get(route.rest.replace(/ \{".*$/, ''));
      expect({ pattern, rest: route.rest, found: rest !== undefined }).toMatchObject({ found: true });
      for (const dryRun of key ? [false, true] : [false]) {
        const query: Record<string, string> = dryRun ? { dry_run: 'true' } : {};
        const body = key ? { [key]: {} } : undefined;
        const viaRpc = route.operations({ path: {}, query, body: key ? {} : undefined });
        expect({ pattern, ops: viaRpc }).toEqual({ pattern, ops: operationsOf(rest!.operation!, { query, body }) });
        for (const name of viaRpc) expect({ pattern, name, known: KNOWN.has(name) }).toMatchObject({ known: true });
        if (key) expect(viaRpc).toEqual(clusterActionOperations(key, dryRun));
      }
    }
  });

  it('lists every rule with its default in docs/SECURITY.md', () => {
    const doc = readFileSync(join(__dirname, '../../../../docs/SECURITY.md'), 'utf8');
    const rows = new Map(doc.split('\n').filter((l) => l.startsWith('| `')).map((l) => [l.split('|')[1].trim(), l]));
    for (const rule of DEFAULT_RULES) {
      expect({ rule: rule.name, row: rows.get(`\`${rule.name}\``)?.includes(`| \`${rule.check}\` |`) }).toEqual({ rule: rule.name, row: true });
    }
  });

  it('documents each served operation in its rule', () => {
    const documented = new Set(OPERATION_RULES.flatMap((r) => (r.operations ?? []).map((o) => `${o.method} ${o.path}`)));
    for (const route of ROUTES) {
      expect({ route: label(route), documented: documented.has(`${route.method} ${route.path.replace(/:([a-z_]+)/g, '{$1}')}`) }).toMatchObject({
        documented: true,
      });
    }
  });
});

describe('default roles over REST', () => {
  let h: GatewayHarness;
  let f: Fixtures;

  beforeAll(async () => {
    h = await startGatewayHarness();
    f = await makeFixtures(h);
  });
  afterAll(() => h?.close());

  it('answers a reader 200 on every read route of its project', async () => {
    const failed: string[] = [];
    for (const route of READS) {
      const res = await send(h, TOKENS.reader, route, urlOf(route, f));
      if (res.status !== 200) failed.push(`${label(route)} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(failed).toEqual([]);
  });

  it("answers a reader 403 with Senlin's error body on every write route, and changes nothing", async () => {
    const failed: string[] = [];
    for (const route of WRITES) {
      for (const dryRun of route.path.endsWith('/actions') ? ['', '?dry_run=true'] : ['']) {
        const res = await send(h, TOKENS.reader, route, urlOf(route, f) + dryRun, { scale_out: {} });
        if (res.status !== 403 || !isDeepStrictEqual(res.body, FORBIDDEN)) failed.push(`${label(route)}${dryRun} → ${res.status}`);
      }
    }
    expect(failed).toEqual([]);
    expect((await h.as(TOKENS.alice).get(`/v1/clusters/${f.ids.cluster_id}`)).status).toBe(200);
  });

  it('lets a member past the rule of every write route but replay', async () => {
    const refused: string[] = [];
    for (const route of WRITES) {
      // ids of nothing and an empty body: the call gets past the policy and stops at the lookup
      // (404) or validation (400); an evaluation of nothing is an answer (200)
      const url = route.path.replace(/:([a-z_]+)/g, (_, n: string) => (n === 'type_name' ? 'nope' : 'does-not-exist'));
      const res = await send(h, TOKENS.alice, route, url);
      if (res.status === 403) refused.push(label(route));
      else expect({ route: label(route), status: [200, 400, 404].includes(res.status) }).toEqual({ route: label(route), status: true });
    }
    expect(refused).toEqual(['POST /v1/actions/:action_id/replay']);
  });

  it('authenticates before it authorizes: no token is 401, not 403', async () => {
    const res = await h.http().post('/v1/clusters').send({});
    expect(res.status).toBe(401);
  });

  it.each([
    ['member', TOKENS.alice],
    ['project admin of A', TOKENS.projectAdmin],
    ['reader', TOKENS.reader],
  ])('refuses global_project and replay to a %s (403): only a cloud admin works across projects', async (_, token) => {
    for (const list of ['clusters', 'profiles', 'policies', 'nodes', 'actions', 'events']) {
      const res = await h.as(token).get(`/v1/${list}?global_project=true`);
      expect({ list, status: res.status, body: res.body }).toEqual({ list, status: 403, body: FORBIDDEN });
      expect((await h.as(token).get(`/v1/${list}?global_project=false`)).status).toBe(200);
    }
    const replay = await h.as(token).post(`/v1/actions/${f.readyAction}/replay`);
    expect(replay.status).toBe(403);
    expect(replay.body).toEqual(FORBIDDEN);
  });

  it('lets a project admin of A do what a member does in A', async () => {
    const res = await h.as(TOKENS.projectAdmin).post('/v1/profiles', { profile: { name: 'pat-p', spec: NOVA_PROFILE_SPEC } });
    expect(res.status).toBe(201);
    expect(res.body.profile.project).toBe(PROJECT_A);
  });

  it("lets the admin project's admin list every project and replay another project's action", async () => {
    const all = await h.as(TOKENS.admin).get('/v1/clusters?global_project=true');
    expect(all.status).toBe(200);
    expect(all.body.clusters.map((c: { id: string }) => c.id)).toContain(f.ids.cluster_id);
    const replay = await h.as(TOKENS.admin).post(`/v1/actions/${f.readyAction}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ action: f.readyAction, cause: 'replay' });
  });

  it("keeps other projects' objects 404 even for a cloud admin outside global_project", async () => {
    expect((await h.as(TOKENS.admin).get(`/v1/clusters/${f.ids.cluster_id}`)).status).toBe(404);
    expect((await h.as(TOKENS.bob).get(`/v1/clusters/${f.ids.cluster_id}`)).status).toBe(404);
  });

  it('lets a system-scoped admin read across projects but create nothing (it has no project)', async () => {
    const all = await h.as(TOKENS.system).get('/v1/clusters?global_project=true');
    expect(all.status).toBe(200);
    expect(all.body.clusters.map((c: { id: string }) => c.id)).toContain(f.ids.cluster_id);
    expect((await h.as(TOKENS.system).get('/v1/clusters')).body).toEqual({ clusters: [] });
    const create = await h.as(TOKENS.system).post('/v1/profiles', { profile: { name: 'sys-p', spec: NOVA_PROFILE_SPEC } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual(FORBIDDEN);
  });

  it('checks cluster_policies:attach and clusters:repair besides clusters:action', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-rbac-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, '"cluster_policies:attach": "rule:project_admin"\n"clusters:repair": "!"\n');
    const g = await startGatewayHarness({ env: { TRELLIS_POLICY_FILE: file }, logger: silentLogger });
    try {
      const attach = { policy_attach: { policy_id: 'whatever' } };
      expect((await g.as(TOKENS.alice).post('/v1/clusters/none/actions', attach)).status).toBe(403);
      expect((await g.as(TOKENS.projectAdmin).post('/v1/clusters/none/actions', attach)).status).toBe(404);
      expect((await g.as(TOKENS.projectAdmin).post('/v1/clusters/none/actions', { repair: {} })).status).toBe(403);
      expect((await g.as(TOKENS.alice).post('/v1/clusters/none/actions', { scale_out: {} })).status).toBe(404);
    } finally {
      await g.close();
    }
  });
});

describe('TRELLIS_POLICY_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-rbac-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('changes who may do what', async () => {
    const policyFile = file('admins-create.yaml', '"clusters:create": "rule:project_admin"\n"profiles:index": "role:member"\n');
    const h = await startGatewayHarness({ env: { TRELLIS_POLICY_FILE: policyFile } });
    try {
      const spec = { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } };
      const profile = await h.as(TOKENS.alice, '1.14').post('/v1/profiles', spec);
      expect(profile.status).toBe(201);
      const cluster = { cluster: { name: 'c', profile_id: profile.body.profile.id } };
      expect((await h.as(TOKENS.alice, '1.14').post('/v1/clusters', cluster)).status).toBe(403);
      expect((await h.as(TOKENS.projectAdmin, '1.14').post('/v1/clusters', cluster)).status).toBe(202);
      expect((await h.as(TOKENS.reader).get('/v1/profiles')).status).toBe(403);
      expect((await h.as(TOKENS.reader).get('/v1/clusters')).status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it.each([
    ['unknown.yaml', '"clusters:frobnicate": "@"\n', /unknown rule 'clusters:frobnicate'/],
    ['broken.yaml', '"clusters:create": "role:admin and"\n', /rule 'clusters:create' does not parse/],
  ])('stops the start on %s, naming the rule', async (name, text, message) => {
    await expect(startGatewayHarness({ env: { TRELLIS_POLICY_FILE: file(name, text) } })).rejects.toThrow(message);
  });
});
