import { ActionEntity, ClusterEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';
import { authenticatedRoutes } from '../testing/routes';
import { MAX_BODY_DEPTH, checkBodyText, checkQueryParams } from './request-input';

const INT4_MAX = 2147483647;
const BEYOND = [INT4_MAX + 1, 1e20, '99999999999999999999'];

/**
 * Issue 18, points 3 and 4: integers out of their column's range, NUL characters and repeated or
 * nested query parameters are a 400 naming the field (a 404 for an id in the path), never a 500 and
 * never an accepted request that fails later.
 */
describe('hostile input: bad numbers, NUL characters, repeated parameters (issue 18)', () => {
  let h: GatewayHarness;
  const alice = () => h.as(TOKENS.alice, '1.14');
  let profileId: string;
  let clusterId: string;

  beforeAll(async () => {
    h = await startGatewayHarness();
    const p = await alice().post('/v1/profiles', { profile: { name: 'hostile-profile', spec: NOVA_PROFILE_SPEC } });
    profileId = p.body.profile.id;
    const c = await alice().post('/v1/clusters', { cluster: { name: 'hostile', profile_id: profileId, max_size: 10 } });
    clusterId = c.body.cluster.id;
    await settle();
  });
  afterAll(() => h?.close());

  /** the engine's part, done by hand: every action finished, the cluster is ACTIVE */
  async function settle() {
    await h.db.dataSource.getRepository(ActionEntity).createQueryBuilder().update().set({ status: 'SUCCEEDED' }).execute();
    await h.db.dataSource.getRepository(ClusterEntity).update({ id: clusterId }, { status: 'ACTIVE' });
  }

  const actionCount = () => h.db.dataSource.getRepository(ActionEntity).count();

  function expect400(res: { status: number; body: { error?: { message: string } } }, message: string | RegExp) {
    expect({ status: res.status, message: res.body.error?.message }).toEqual({
      status: 400,
      message: typeof message === 'string' ? message : expect.stringMatching(message),
    });
  }

  describe('integers hold what Senlin accepts and an int4 column stores', () => {
    it.each(BEYOND)('refuses timeout %p at create and update, and no action is created', async (timeout) => {
      const before = await actionCount();
      expect400(await alice().post('/v1/clusters', { cluster: { name: 'c', profile_id: profileId, timeout } }), "Value must be <= 2147483647 for field 'timeout'.");
      expect400(await alice().patch(`/v1/clusters/${clusterId}`, { cluster: { timeout } }), "Value must be <= 2147483647 for field 'timeout'.");
      expect(await actionCount()).toBe(before);
      const cluster = await alice().get(`/v1/clusters/${clusterId}`);
      expect(cluster.body.cluster).toMatchObject({ timeout: 3600, status: 'ACTIVE' });
    });

    it('stores the largest int4 timeout', async () => {
      const res = await alice().patch(`/v1/clusters/${clusterId}`, { cluster: { timeout: INT4_MAX } });
      expect(res.status).toBe(202);
      const created = await alice().post('/v1/clusters', { cluster: { name: 'longest', profile_id: profileId, timeout: String(INT4_MAX) } });
      expect(created.status).toBe(202);
      expect(created.body.cluster.timeout).toBe(INT4_MAX);
      await settle();
    });

    it.each([
      [{ desired_capacity: INT4_MAX + 1 }, 'The value for the desired_capacity field must be less than or equal to 1000.'],
      [{ min_size: 1e20 }, 'The value for the min_size field must be less than or equal to 1000.'],
      [{ max_size: '99999999999999999999' }, 'The value for the max_size field must be less than or equal to 1000.'],
      [{ max_size: -2 }, 'The value for the max_size field must be greater than or equal to -1.'],
      [{ timeout: -1 }, "Value must be >= 0 for field 'timeout'."],
      [{ timeout: 1.5 }, "The value for timeout must be an integer: '1.5'."],
      [{ timeout: '1e3' }, "The value for timeout must be an integer: '1e3'."],
      [{ desired_capacity: [1] }, "The value for desired_capacity must be an integer: '[1]'."],
    ])('refuses cluster %j at create', async (fields, message) => {
      expect400(await alice().post('/v1/clusters', { cluster: { name: 'c', profile_id: profileId, ...fields } }), message);
    });

    it.each([
      [{ scale_out: { count: INT4_MAX + 1 } }, "Value must be <= 2147483647 for field 'count'."],
      [{ scale_in: { count: 1e20 } }, "Value must be <= 2147483647 for field 'count'."],
      [{ scale_out: { count: 2.5 } }, "The value for count must be an integer: '2.5'."],
      [{ resize: { adjustment_type: 'EXACT_CAPACITY', number: 1e20 } }, "Value must be <= 2147483647 for field 'number'."],
      [{ resize: { adjustment_type: 'CHANGE_IN_CAPACITY', number: -1e20, strict: false } }, "Value must be >= -2147483648 for field 'number'."],
      [{ resize: { min_size: INT4_MAX + 1 } }, 'The value for the min_size field must be less than or equal to 2147483647.'],
      [{ resize: { max_size: '99999999999999999999' } }, 'The value for the max_size field must be less than or equal to 2147483647.'],
      [{ resize: { adjustment_type: 'CHANGE_IN_PERCENTAGE', number: 10, min_step: INT4_MAX + 1 } }, "Value must be <= 2147483647 for field 'min_step'."],
      [{ policy_attach: { policy_id: 'x', priority: 1e20 } }, "Additional properties are not allowed ('priority' was unexpected)"],
    ])('refuses the cluster action %j, creating no action', async (body, message) => {
      const before = await actionCount();
      expect400(await alice().post(`/v1/clusters/${clusterId}/actions`, body), message);
      expect400(await alice().post(`/v1/clusters/${clusterId}/actions?dry_run=true`, body), message);
      expect(await actionCount()).toBe(before);
    });

    it('refuses limit beyond int4 on a list, and an event level beyond it as any level that is none', async () => {
      expect400(await alice().get('/v1/clusters?limit=99999999999999999999'), "Value must be <= 2147483647 for field 'limit'.");
      expect400(await alice().get('/v1/events?level=99999999999999999999'), 'Field value 99999999999999999999 is invalid');
      expect((await alice().get(`/v1/events?level=${INT4_MAX}&level=INFO`)).status).toBe(200);
    });

    it("refuses a webhook receiver whose params its action would refuse, at create and update", async () => {
      const make = (params: unknown) =>
        alice().post('/v1/receivers', { receiver: { name: 'hook', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', params } });
      expect400(await make({ count: INT4_MAX + 1 }), "Value must be <= 2147483647 for field 'count'.");
      expect400(await make({ count: 'many' }), "The value for count must be an integer: 'many'.");
      const made = await make({ count: 1 });
      expect(made.status).toBe(201);
      const update = await h.as(TOKENS.alice, '1.7').patch(`/v1/receivers/${made.body.receiver.id}`, { receiver: { params: { count: 1e20 } } });
      expect400(update, "Value must be <= 2147483647 for field 'count'.");
      const resize = await alice().post('/v1/receivers', {
        receiver: { name: 'hook2', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_RESIZE', params: { min_step: INT4_MAX + 1 } },
      });
      expect400(resize, "Value must be <= 2147483647 for field 'min_step'.");
    });
  });

  describe('NUL characters', () => {
    it('answers every route with a NUL in a path parameter without a 5xx, and 404 for an unknown id', async () => {
      for (const route of authenticatedRoutes().filter((r) => r.path.includes(':'))) {
        const paths = [route.path.replace(/:\w+/g, 'a%00b')];
        // a NUL in the second parameter, the cluster being real (never the only one: DELETE would delete it)
        if (route.path.match(/:\w+/g)!.length > 1) paths.push(route.path.replace(':cluster_id', clusterId).replace(/:\w+/g, 'a%00b'));
        for (const p of paths) {
          const res = await h.as(TOKENS.alice, '1.14')[route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](p);
          expect({ route: `${route.method} ${p}`, status: res.status < 500 }).toEqual({ route: `${route.method} ${p}`, status: true });
        }
      }
      for (const [path, kind] of [
        ['/v1/clusters/a%00b', 'cluster'],
        ['/v1/nodes/a%00b', 'node'],
        ['/v1/profiles/a%00b', 'profile'],
        ['/v1/policies/a%00b', 'policy'],
        ['/v1/actions/a%00b', 'action'],
        ['/v1/events/a%00b', 'event'],
        ['/v1/receivers/a%00b', 'receiver'],
      ]) {
        const res = await alice().get(path);
        expect({ path, status: res.status, message: res.body.error.message }).toEqual({ path, status: 404, message: `The ${kind} 'a\u0000b' could not be found.` });
      }
    });

    it.each([
      ['/v1/clusters?name=a%00b', 'name'],
      ['/v1/clusters?status=ACTIVE&status=A%00', 'status'],
      ['/v1/nodes?cluster_id=a%00b', 'cluster_id'],
      ['/v1/events?oname=a%00b', 'oname'],
      ['/v1/actions?target=a%00b', 'target'],
      ['/v1/receivers?marker=a%00b', 'marker'],
      ['/v1/policies?sort=name%00', 'sort'],
    ])('refuses a NUL in the query %s naming the parameter', async (path, name) => {
      expect400(await alice().get(path), `The value of the query parameter '${name}' contains a NUL character.`);
    });

    it.each([
      ['POST', '/v1/profiles', 'profile.name', { profile: { name: 'a\u0000b', spec: NOVA_PROFILE_SPEC } }],
      ['POST', '/v1/profiles', 'profile.metadata.k', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC, metadata: { k: 'v\u0000' } } }],
      ['POST', '/v1/clusters', 'cluster.profile_id', { cluster: { name: 'c', profile_id: 'hostile-profile\u0000' } }],
      ['POST', '/v1/nodes', 'node.role', { node: { name: 'n', profile_id: 'hostile-profile', role: 'r\u0000' } }],
      ['POST', '/v1/policies', 'policy.spec.type', { policy: { name: 'p', spec: { type: 'senlin.policy.scaling\u0000', version: 1 } } }],
      ['POST', '/v1/receivers', 'receiver.params.a[0]', { receiver: { name: 'r', type: 'webhook', cluster_id: 'x', action: 'CLUSTER_CHECK', params: { a: ['\u0000'] } } }],
      ['POST', `/v1/clusters/{c}/actions`, 'add_nodes.nodes[1]', { add_nodes: { nodes: ['ok', 'no\u0000de'] } }],
      ['PATCH', `/v1/clusters/{c}`, 'cluster.name', { cluster: { name: 'x\u0000' } }],
    ])('refuses a NUL in the body of %s %s naming %s', async (method, path, field, body) => {
      const url = path.replace('{c}', clusterId);
      const res = method === 'POST' ? await alice().post(url, body) : await alice().patch(url, body);
      expect400(res, `The value for ${field} contains a NUL character.`);
    });

    it('refuses a NUL in a key of the body, naming the map that holds it', async () => {
      expect400(
        await alice().post('/v1/clusters', { cluster: { name: 'c', profile_id: profileId, metadata: { 'k\u0000': 'v' } } }),
        'A key in cluster.metadata contains a NUL character.',
      );
    });

    it(`finds a NUL ${MAX_BODY_DEPTH} levels deep in a body, naming its path`, async () => {
      const deep = `${'{"a":'.repeat(MAX_BODY_DEPTH - 3)}"v\\u0000"${'}'.repeat(MAX_BODY_DEPTH - 3)}`;
      const res = await alice()
        .post('/v1/profiles')
        .set('Content-Type', 'application/json')
        .send(`{"profile": {"name": "p", "spec": ${JSON.stringify(NOVA_PROFILE_SPEC)}, "metadata": ${deep}}}`);
      expect400(res, `The value for profile.metadata${'.a'.repeat(MAX_BODY_DEPTH - 3)} contains a NUL character.`);
    });

    it('refuses a lone surrogate in cluster metadata naming it (PostgreSQL refused it in jsonb: a 500)', async () => {
      const res = await alice()
        .patch(`/v1/clusters/${clusterId}`)
        .set('Content-Type', 'application/json')
        .send('{"cluster": {"metadata": {"\\ud800": "v"}}}');
      expect400(res, 'A key in cluster.metadata contains a lone UTF-16 surrogate (not Unicode).');
    });

    it.each([
      ['POST', '/v1/profiles', (deep: string) => `{"profile": {"name": "p", "spec": ${JSON.stringify(NOVA_PROFILE_SPEC)}, "metadata": ${deep}}}`, 'profile.metadata'],
      ['PATCH', '/v1/clusters/{c}', (deep: string) => `{"cluster": {"timeout": ${deep}}}`, 'cluster.timeout'],
    ])(
      // 100,000 levels were a 500 (the stack ran out in JSON.stringify quoting the value), found by the fuzz suite
      `refuses a body nested more than ${MAX_BODY_DEPTH} levels (%s %s), naming where, also 100,000 levels deep`,
      async (method, path, body, field) => {
        const url = path.replace('{c}', clusterId);
        for (const levels of [MAX_BODY_DEPTH, 100_000]) {
          const deep = `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
          const res = await (method === 'POST' ? alice().post(url) : alice().patch(url)).set('Content-Type', 'application/json').send(body(deep));
          expect400(res, `The request body is nested more than ${MAX_BODY_DEPTH} levels deep at ${field}${'.a'.repeat(MAX_BODY_DEPTH - 2)}.`);
        }
      },
    );
  });

  describe('query parameters', () => {
    it.each([
      ['/v1/clusters?limit=1&limit=2', "The query parameter 'limit' is given 2 times; it takes one value."],
      ['/v1/clusters?sort=name&sort=status', "The query parameter 'sort' is given 2 times; it takes one value."],
      [`/v1/nodes?marker=${randomUUID()}&marker=${randomUUID()}`, "The query parameter 'marker' is given 2 times; it takes one value."],
      ['/v1/policies?global_project=false&global_project=true', "The query parameter 'global_project' is given 2 times; it takes one value."],
      ['/v1/nodes?show_details=true&show_details=false', "The query parameter 'show_details' is given 2 times; it takes one value."],
      ['/v1/clusters?limit[]=1', "Invalid parameter 'limit[]': a query parameter is given as limit=<value>, without [] or [key]."],
      ['/v1/clusters?status[]=ACTIVE', "Invalid parameter 'status[]': a query parameter is given as status=<value>, without [] or [key]."],
      ['/v1/clusters?name[a]=x', "Invalid parameter 'name[a]': a query parameter is given as name=<value>, without [] or [key]."],
    ])('refuses %s', async (path, message) => {
      expect400(await alice().get(path), message);
    });

    it('keeps repeated filters, ORed as Senlin does', async () => {
      const res = await alice().get('/v1/clusters?name=hostile&name=longest&name=other&status=ACTIVE&status=INIT');
      expect(res.status).toBe(200);
      expect(res.body.clusters.map((c: { name: string }) => c.name).sort()).toEqual(['hostile', 'longest']);
    });

    it.each([
      ['dry_run=true&dry_run=false', "The query parameter 'dry_run' is given 2 times; it takes one value."],
      ['dry_run[]=true', "Invalid parameter 'dry_run[]': a query parameter is given as dry_run=<value>, without [] or [key]."],
      ['dry_run[x]=true', "Invalid parameter 'dry_run[x]': a query parameter is given as dry_run=<value>, without [] or [key]."],
      ['dry_run=maybe', "Invalid value 'maybe' specified for 'dry_run'"],
    ])('refuses ?%s on a cluster action and runs nothing', async (query, message) => {
      const before = await actionCount();
      expect400(await alice().post(`/v1/clusters/${clusterId}/actions?${query}`, { scale_out: { count: 1 } }), message);
      expect(await actionCount()).toBe(before);
    });

    it.each(['YES', 'on', ' t ', '1', 'True'])("reads dry_run=%p as oslo's true: a decision, no action", async (word) => {
      const before = await actionCount();
      const res = await alice().post(`/v1/clusters/${clusterId}/actions?dry_run=${encodeURIComponent(word)}`, { scale_out: { count: 1 } });
      expect(res.status).toBe(200);
      expect(await actionCount()).toBe(before);
    });

    it('refuses a repeated force on delete, and the cluster stays', async () => {
      const before = await actionCount();
      expect400(await alice().delete(`/v1/clusters/${clusterId}?force=true&force=true`), "The query parameter 'force' is given 2 times; it takes one value.");
      expect(await actionCount()).toBe(before);
    });
  });

  it('authenticates first: a malformed query without a token is a 401', async () => {
    const res = await h.http().get('/v1/clusters?limit=1&limit=2&name=a%00b').set('OpenStack-API-Version', 'clustering 1.14');
    expect(res.status).toBe(401);
  });

  it('leaves the cluster usable after all of it: a valid action is accepted', async () => {
    await settle();
    const res = await alice().post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } });
    expect(res.status).toBe(202);
  });
});

describe('checkQueryParams and checkBodyText', () => {
  const refusal = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      return (e as Error).message;
    }
    return null;
  };

  it('refuses the object a nested query parser makes of name[key]=value, and a list of them', () => {
    expect(refusal(() => checkQueryParams({ dry_run: { a: 'true' } }))).toBe(
      "Invalid parameter 'dry_run': a query parameter is given as dry_run=<value>, without [] or [key].",
    );
    expect(refusal(() => checkQueryParams({ status: ['ACTIVE', { a: 'x' }] }))).toMatch(/^Invalid parameter 'status'/);
  });

  it('lets repeated filters, numbers and booleans through (RPC params carry them)', () => {
    expect(refusal(() => checkQueryParams({ status: ['ACTIVE', 'ERROR'], limit: 2, global_project: true, dry_run: ['true'] }))).toBeNull();
  });

  it('names the place of a NUL deep in a body, and passes a body without one', () => {
    expect(refusal(() => checkBodyText({ a: [{ b: 'ok' }, { c: ['x', 'y\u0000'] }] }))).toBe('The value for a[1].c[1] contains a NUL character.');
    expect(refusal(() => checkBodyText('\u0000'))).toBe('The value for the request body contains a NUL character.');
    expect(refusal(() => checkBodyText({ a: { '\u0000': 1 } }))).toBe('A key in a contains a NUL character.');
    expect(refusal(() => checkBodyText({ a: [1, true, null, { b: 'x' }], c: 2 }))).toBeNull();
    expect(refusal(() => checkBodyText(undefined))).toBeNull();
  });

  it('finds a lone UTF-16 surrogate in a value or a key, and keeps paired ones (the fuzz suite found it a 500 from jsonb)', () => {
    expect(refusal(() => checkBodyText({ cluster: { metadata: { k: 'a\ud800b' } } }))).toBe(
      'The value for cluster.metadata.k contains a lone UTF-16 surrogate (not Unicode).',
    );
    expect(refusal(() => checkBodyText({ cluster: { metadata: { '\udfff': 1 } } }))).toBe('A key in cluster.metadata contains a lone UTF-16 surrogate (not Unicode).');
    expect(refusal(() => checkBodyText({ n: ['\udc00\ud800'] }))).toBe('The value for n[0] contains a lone UTF-16 surrogate (not Unicode).');
    expect(refusal(() => checkBodyText({ name: '😀集群', '😀': 'é' }))).toBeNull();
  });
});
