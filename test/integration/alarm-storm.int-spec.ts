import { silentLogger } from '@trellis/common';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { ActionEntity, ClusterEntity, type Database } from '@trellis/persistence';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { Client } from 'pg';
import request from 'supertest';
import type { RunningGateway } from '../../apps/gateway/src/bootstrap';
import { NOVA_PROFILE_SPEC, TOKENS, startGatewayWithFakes } from '../../apps/gateway/src/testing/gateway-harness';

/**
 * An alarm storm sends a cluster the same scale-out again and again while the first one runs. The
 * repeats are refused from committed rows (Senlin's 409) without waiting for the cluster's row
 * lock, which the accepted request's transaction holds: here another connection holds it for the
 * whole test, so a refusal that queued for it would never come.
 */
describe('scale-outs of an alarm storm (PostgreSQL)', () => {
  let db: Database & { url: string };
  let bus: InMemoryMessageBus;
  let gateway: RunningGateway;
  let holder: Client;
  let clusterId: string;
  let receiverId: string;

  const api = (method: 'get' | 'post', path: string) =>
    request(gateway.url)[method](path).set('X-Auth-Token', TOKENS.alice).set('OpenStack-API-Version', 'clustering 1.14').timeout(8000);

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 10 });
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    gateway = await startGatewayWithFakes(db.dataSource, bus, { rpc: false });
    const profile = (await api('post', '/v1/profiles').send({ profile: { name: 'p', spec: NOVA_PROFILE_SPEC } }).expect(201)).body.profile.id;
    clusterId = (await api('post', '/v1/clusters').send({ cluster: { name: 'web', profile_id: profile } }).expect(202)).body.cluster.id;
    // nothing runs actions here: finish the create by hand, as the engine would
    await db.dataSource.getRepository(ActionEntity).update({ cluster_id: clusterId }, { status: 'SUCCEEDED' });
    await db.dataSource.getRepository(ClusterEntity).update({ id: clusterId }, { status: 'ACTIVE' });
    receiverId = (
      await api('post', '/v1/receivers').send({ receiver: { name: 'alarm', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT' } }).expect(201)
    ).body.receiver.id;
    holder = new Client({ connectionString: db.url });
    await holder.connect();
  });

  afterAll(async () => {
    await holder?.query('ROLLBACK').catch(() => undefined);
    await holder?.end();
    await gateway?.close();
    await bus?.close();
    await db?.close();
  });

  it('accepts the first scale-out, then refuses the repeats over REST and webhook while the cluster row is locked elsewhere', async () => {
    const first = await api('post', `/v1/clusters/${clusterId}/actions`).send({ scale_out: { count: 1 } });
    expect(first.status).toBe(202);

    await holder.query('BEGIN');
    await holder.query('SELECT id FROM clusters WHERE id = $1 FOR UPDATE', [clusterId]);
    const started = Date.now();
    const again = await api('post', `/v1/clusters/${clusterId}/actions`).send({ scale_out: { count: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.error.type).toBe('ActionConflict');
    expect(again.body.error.message).toContain('conflicts with the following action(s)');
    const hook = await request(gateway.url).post(`/v1/webhooks/${receiverId}/trigger?V=2`).timeout(8000);
    expect(hook.status).toBe(409);
    expect(Date.now() - started).toBeLessThan(6000);
    // a bad request is still a 400 before any conflict, as on the locked path
    const bad = await api('post', `/v1/clusters/${clusterId}/actions`).send({ scale_out: { count: -1 } });
    expect(bad.status).toBe(400);
    await holder.query('ROLLBACK');

    expect(await db.dataSource.getRepository(ActionEntity).countBy({ cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
  });
});
