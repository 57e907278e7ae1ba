import { loadConfig, silentLogger } from '@trellis/common';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { ActionEntity, IdempotencyKeyEntity, type Database } from '@trellis/persistence';
import { PolicyRegistry } from '@trellis/policies';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../../apps/gateway/src/bootstrap';
import {
  FakeCloudCatalog,
  FakeTokenValidator,
  NOVA_PROFILE_SPEC,
  RecordingTrustIssuer,
  TOKENS,
} from '../../apps/gateway/src/testing/gateway-harness';

/**
 * Retries that arrive together (a client that timed out and retried while the first request was
 * still in the gateway) on PostgreSQL, where transactions really run at once: the first request
 * takes the key's row, the others wait for it to commit and answer with its answer.
 */
describe('Idempotency-Key under concurrent retries (PostgreSQL)', () => {
  let db: Database & { url: string; name: string };
  let bus: InMemoryMessageBus;
  let gateway: RunningGateway;

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 10 });
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    gateway = await startGateway({
      config: loadConfig({ TRELLIS_PORT: '0' }),
      dataSource: db.dataSource,
      bus,
      tokenValidator: new FakeTokenValidator(),
      trusts: new RecordingTrustIssuer(),
      cloudCatalog: new FakeCloudCatalog(),
      registry: PolicyRegistry.withBuiltins(),
      logger: silentLogger,
      rpc: false,
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await bus?.close();
    await db?.close();
  });

  const post = (path: string, body: object, key?: string) => {
    const t = request(gateway.url).post(path).set('X-Auth-Token', TOKENS.alice).set('OpenStack-API-Version', 'clustering 1.14');
    return (key ? t.set('Idempotency-Key', key) : t).send(body);
  };

  it('stores one action for eight copies of a scale-out sent at once with one key, and answers all eight with it', async () => {
    const profile = await post('/v1/profiles', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
    const cluster = await post('/v1/clusters', { cluster: { name: 'c', profile_id: profile.body.profile.id, max_size: 20 } });
    expect(cluster.status).toBe(202);
    const clusterId = cluster.body.cluster.id;
    await db.dataSource.getRepository(ActionEntity).update({ cluster_id: clusterId }, { status: 'SUCCEEDED' });

    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((a) => a.body.action)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    expect(await db.dataSource.getRepository(ActionEntity).countBy({ target: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
    expect(await db.dataSource.getRepository(IdempotencyKeyEntity).findOneByOrFail({ key })).toMatchObject({ action_id: answers[0].body.action });
  });
});
