import { ActionEntity, NodeEntity, TrustEntity } from '@trellis/persistence';
import request from 'supertest';
import { NOVA_PROFILE_SPEC, PROJECT_A, PROJECT_B, TOKENS, gatewayOnBus } from '../testing/gateway-harness';

const node = (name: string, profile: string) => ({ node: { name, profile_id: profile } });

describe('limits on unfinished actions', () => {
  // nothing runs the actions: they stay READY
  const { t, rest, rpc } = gatewayOnBus({
    env: {
      TRELLIS_MAX_ACTIONS_PER_PROJECT: '2',
      TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: '3',
      TRELLIS_MAX_ACTIONS: '4',
      TRELLIS_REQUESTS_PER_SECOND: '0',
    },
  });
  const actions = () => t.db.dataSource.getRepository(ActionEntity).find();
  let profileA: string;
  let profileB: string;

  beforeAll(async () => {
    profileA = (await rest(TOKENS.alice).post('/v1/profiles', { profile: { name: 'pa', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;
    profileB = (await rest(TOKENS.bob).post('/v1/profiles', { profile: { name: 'pb', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;
  });

  it("refuses a project's third unfinished action with 429, Retry-After and Senlin's error body, storing nothing", async () => {
    await rest(TOKENS.alice).post('/v1/nodes', node('n1', profileA)).expect(202);
    await rest(TOKENS.alice).post('/v1/nodes', node('n2', profileA)).expect(202);
    const refused = await rest(TOKENS.alice).post('/v1/nodes', node('n3', profileA));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.body).toEqual({
      code: 429,
      title: 'Too Many Requests',
      explanation: 'The client has sent too many requests in a given amount of time.',
      error: {
        code: 429,
        type: 'ActionLimitExceeded',
        message: `Project ${PROJECT_A} has 2 unfinished actions, the most it may have at once; try again when one has finished.`,
      },
    });
    const nodes = await t.db.dataSource.getRepository(NodeEntity).findBy({ project: PROJECT_A });
    expect(nodes.map((n) => n.name).sort()).toEqual(['n1', 'n2']);
    expect(await actions()).toHaveLength(2);
  });

  it('refuses before a trust is made: a user whose first action is refused has delegated nothing', async () => {
    const refused = await rest(TOKENS.carol).post('/v1/nodes', node('c1', profileA));
    expect(refused.status).toBe(429);
    expect(await t.db.dataSource.getRepository(TrustEntity).findBy({ user_id: 'carol-id' })).toEqual([]);
    expect([...t.trusts.trusts.values()].map((trust) => trust.trustorUserId)).toEqual(['alice-id']);
  });

  it("gives RPC requests (services, alarms) the project's larger RPC/webhook limit, counting every unfinished action; retry-after in the reply headers", async () => {
    // REST is full at 2; the same project's RPC request still gets its third place
    const accepted = await rpc(TOKENS.alice, 'node.create', undefined, node('r1', profileA));
    expect(accepted.status).toBe(202);
    const reply = await rpc(TOKENS.alice, 'node.create', undefined, node('r2', profileA));
    expect(reply).toMatchObject({ status: 429, error: { code: 429, type: 'ActionLimitExceeded' }, headers: { 'retry-after': '5' } });
    expect(reply.error!.message).toBe(`Project ${PROJECT_A} has 3 unfinished actions, the most it may have at once; try again when one has finished.`);
    expect(await actions()).toHaveLength(3);
    // and REST is still refused at its own limit
    expect((await rest(TOKENS.alice).post('/v1/nodes', node('n4', profileA))).status).toBe(429);
  });

  it('refuses any project once every project together has the most unfinished actions, and accepts again when one ends', async () => {
    await rest(TOKENS.bob).post('/v1/nodes', node('b1', profileB)).expect(202);
    const refused = await rest(TOKENS.bob).post('/v1/nodes', node('b2', profileB));
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toBe('Trellis has 4 unfinished actions, the most it runs at once; try again later.');
    // RPC and webhooks meet the same overall limit
    expect(await rpc(TOKENS.bob, 'node.create', undefined, node('b3', profileB))).toMatchObject({ status: 429, error: { type: 'ActionLimitExceeded' } });
    expect(await t.db.dataSource.getRepository(NodeEntity).countBy({ project: PROJECT_B })).toBe(1);

    const [first] = (await actions()).filter((a) => a.project === PROJECT_A);
    await t.db.dataSource.getRepository(ActionEntity).update({ id: first.id }, { status: 'SUCCEEDED' });
    await rest(TOKENS.bob).post('/v1/nodes', node('b2', profileB)).expect(202);
  });

  it('leaves reads and writes that start no action alone', async () => {
    await rest(TOKENS.alice).get('/v1/actions').expect(200);
    await rest(TOKENS.alice).post('/v1/profiles', { profile: { name: 'pz', spec: NOVA_PROFILE_SPEC } }).expect(201);
  });
});

describe('the request rate of a project and of a webhook', () => {
  // one request every 1000 s after a burst of 4 (RPC: 3): no refill happens while the test runs
  const { t, rest, rpc } = gatewayOnBus({
    env: {
      TRELLIS_REQUESTS_PER_SECOND: '0.001',
      TRELLIS_REQUEST_BURST: '4',
      TRELLIS_RPC_REQUESTS_PER_SECOND: '0.001',
      TRELLIS_RPC_REQUEST_BURST: '3',
    },
  });

  it("answers 429 with Retry-After once the project's burst is used, over REST and RPC each with its own bucket; other projects go on", async () => {
    for (let i = 0; i < 4; i++) await rest(TOKENS.alice).get('/v1/profiles').expect(200);
    // a service's RPC requests do not use up the people's REST burst, nor the other way round
    for (let i = 0; i < 3; i++) expect((await rpc(TOKENS.carol, 'profile.list')).status).toBe(200);
    const refused = await rest(TOKENS.alice).get('/v1/profiles');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(990);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(1000);
    expect(refused.body.error).toEqual({
      code: 429,
      type: 'RateLimitExceeded',
      message: expect.stringMatching(new RegExp(`^Too many requests for project ${PROJECT_A}: at most 0.001 a second, in bursts of up to 4; try again in \\d+ s\\.$`)),
    });
    const overRpc = await rpc(TOKENS.reader, 'profile.list');
    expect(overRpc).toMatchObject({ status: 429, error: { type: 'RateLimitExceeded' } });
    expect(overRpc.error!.message).toMatch(new RegExp(`^Too many requests for project ${PROJECT_A} over RPC: at most 0.001 a second, in bursts of up to 3;`));
    expect(Number(overRpc.headers['retry-after'])).toBeGreaterThan(990);
    await rest(TOKENS.bob).get('/v1/profiles').expect(200);
  });

  it('still answers 401 to a request without a valid token: only a known caller is counted', async () => {
    await request(t.gateway.url).get('/v1/profiles').set('X-Auth-Token', 'forged').expect(401);
  });

  it('counts webhook triggers per receiver, not against the owner, and does not name the receiver when refusing', async () => {
    const admin = rest(TOKENS.admin);
    const profile = (await admin.post('/v1/profiles', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;
    const cluster = (await admin.post('/v1/clusters', { cluster: { name: 'c', profile_id: profile } }).expect(202)).body.cluster.id;
    const receiver = (
      await admin.post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: cluster, action: 'CLUSTER_SCALE_OUT' } }).expect(201)
    ).body.receiver;
    const trigger = () => request(t.gateway.url).post(`/v1/webhooks/${receiver.id}/trigger?V=2`);
    // the cluster's create is still READY, so each trigger is Senlin's 409; it still counts
    for (let i = 0; i < 4; i++) expect((await trigger()).status).toBe(409);
    const refused = await trigger();
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/^Too many requests for this webhook: /);
    expect(JSON.stringify(refused.body)).not.toContain(receiver.id);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(990);
    // an id that finds no receiver is a 404 however often it is tried: nothing to count
    for (let i = 0; i < 6; i++) await request(t.gateway.url).post(`/v1/webhooks/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/trigger?V=2`).expect(404);
    await admin.get(`/v1/receivers/${receiver.id}`).expect(200);
  });
});
