import { silentLogger } from '@trellis/common';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { ActionEntity, NodeEntity, type Database } from '@trellis/persistence';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import request from 'supertest';
import type { RunningGateway } from '../../apps/gateway/src/bootstrap';
import { NOVA_PROFILE_SPEC, PROJECT_A, PROJECT_B, TOKENS, startGatewayWithFakes } from '../../apps/gateway/src/testing/gateway-harness';

/**
 * The limits on unfinished actions with two gateway replicas on one PostgreSQL, where their
 * transactions really run at once: the count is taken under the project's and the deployment's
 * advisory locks, so of many node creates sent together to both replicas exactly as many are
 * accepted as the limits leave room for, and the refused ones store nothing.
 */
describe('limits on unfinished actions with two gateways (PostgreSQL)', () => {
  const PER_PROJECT = 5;
  const OVERALL = 8;
  let db: Database;
  let bus: InMemoryMessageBus;
  let gateways: RunningGateway[];

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 20 });
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    const env = { TRELLIS_MAX_ACTIONS_PER_PROJECT: String(PER_PROJECT), TRELLIS_MAX_ACTIONS: String(OVERALL), TRELLIS_REQUESTS_PER_SECOND: '0' };
    gateways = [await startGatewayWithFakes(db.dataSource, bus, { rpc: false, env }), await startGatewayWithFakes(db.dataSource, bus, { rpc: false, env })];
  });

  afterAll(async () => {
    for (const g of gateways ?? []) await g.close();
    await bus?.close();
    await db?.close();
  });

  const post = (i: number, token: string, path: string, body: object) =>
    request(gateways[i % 2].url).post(path).set('X-Auth-Token', token).set('OpenStack-API-Version', 'clustering 1.14').send(body);

  /** `n` node creates sent at once, alternating between the replicas; the statuses, sorted */
  async function burst(token: string, profileId: string, n: number): Promise<number[]> {
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => post(i, token, '/v1/nodes', { node: { name: `n${i}`, profile_id: profileId } })));
    for (const a of answers.filter((r) => r.status === 429)) expect(a.body.error.type).toBe('ActionLimitExceeded');
    return answers.map((r) => r.status).sort();
  }

  const count = (status: number, n: number) => Array<number>(n).fill(status);

  it('accepts exactly the per-project limit of 30 creates sent at once, then exactly what the overall limit leaves', async () => {
    const profileA = (await post(0, TOKENS.alice, '/v1/profiles', { profile: { name: 'pa', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;
    const profileB = (await post(1, TOKENS.bob, '/v1/profiles', { profile: { name: 'pb', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;

    expect(await burst(TOKENS.alice, profileA, 30)).toEqual([...count(202, PER_PROJECT), ...count(429, 30 - PER_PROJECT)]);
    expect(await burst(TOKENS.bob, profileB, 30)).toEqual([...count(202, OVERALL - PER_PROJECT), ...count(429, 30 - (OVERALL - PER_PROJECT))]);

    const actions = db.dataSource.getRepository(ActionEntity);
    expect(await actions.countBy({ project: PROJECT_A })).toBe(PER_PROJECT);
    expect(await actions.countBy({ project: PROJECT_B })).toBe(OVERALL - PER_PROJECT);
    const nodes = db.dataSource.getRepository(NodeEntity);
    expect(await nodes.countBy({ project: PROJECT_A })).toBe(PER_PROJECT);
    expect(await nodes.countBy({ project: PROJECT_B })).toBe(OVERALL - PER_PROJECT);
  });
});
