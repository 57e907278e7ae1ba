import { randomUUID } from 'node:crypto';
import { ServiceHeartbeat } from '@trellis/persistence';
import { silentLogger } from '@trellis/common';
import { startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

describe('GET /v1/services (Senlin 1.7, test_services_list.py)', () => {
  let h: GatewayHarness;

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  const list = (token: string = TOKENS.admin, version = '1.7') => h.as(token, version).get('/v1/services');

  it('lists the running gateway, up, with every key Senlin shows', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.services).toEqual([
      {
        binary: 'trellis-gateway',
        disabled_reason: null,
        host: expect.any(String),
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        state: 'up',
        status: 'enabled',
        topic: h.gateway.url,
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      },
    ]);
  });

  it('shows a component that registered and then stopped renewing as down, and forgets one that stopped cleanly', async () => {
    const engine = await ServiceHeartbeat.start(h.db.dataSource, { binary: 'trellis-policy-engine', topic: 'trellis.policy-engine.actions' }, silentLogger, 60_000);
    const stale = randomUUID();
    await h.db.dataSource.query(
      `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at) VALUES ($1, 'trellis-nova-worker', 'gone', 't', false, now() - interval '1 hour', now() - interval '1 hour')`,
      [stale],
    );
    let services = (await list()).body.services as Array<{ id: string; binary: string; state: string }>;
    expect(services.map((s) => [s.binary, s.state])).toEqual([
      ['trellis-nova-worker', 'down'],
      ['trellis-gateway', 'up'],
      ['trellis-policy-engine', 'up'],
    ]);
    await engine.stop();
    services = (await list()).body.services;
    expect(services.map((s) => s.binary)).toEqual(['trellis-nova-worker', 'trellis-gateway']);
    await h.db.dataSource.query('DELETE FROM services WHERE id = $1', [stale]);
  });

  it('is for the cloud admin only, from 1.7', async () => {
    expect((await list(TOKENS.alice)).status).toBe(403);
    const old = await list(TOKENS.admin, '1.6');
    expect({ status: old.status, message: old.body.error.message }).toEqual({ status: 400, message: "API version '1.6' is not supported on this method." });
  });
});
