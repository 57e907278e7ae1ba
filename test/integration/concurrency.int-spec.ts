import type { Embedded } from '../../cli/embedded';
import { ApiClient } from '../support/api-client';
import { demoApi } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Requests that race on one cluster, on PostgreSQL (PGlite runs transactions one at a time, so only
 * a real server can show this): the gateway locks the cluster row and checks for active actions in
 * the same transaction, so of several scale-outs sent at once exactly one is accepted and the
 * others get Senlin's 409, whichever order their transactions commit in.
 */
describe('concurrent actions on one cluster (RabbitMQ + PostgreSQL)', () => {
  let t: TestTrellis;
  let trellis: Embedded;

  beforeAll(async () => {
    t = await startTestTrellis({ stack: 'rabbitmq+postgres' });
    trellis = t.trellis;
  });
  afterAll(() => t?.close());

  it('accepts exactly one of eight scale-outs sent at once; the rest are 409 and change nothing', async () => {
    const api = await demoApi(trellis);
    const { clusterId } = await createProfileAndCluster(api, 'race');
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } })),
      );
      const accepted = answers.filter((r) => r.status === 202);
      const refused = answers.filter((r) => r.status === 409);
      expect([accepted.length, refused.length]).toEqual([1, 7]);
      for (const r of refused) {
        expect(r.body.error.message).toMatch(/conflicts with the following action|already locked/);
      }
      const done = await api.waitForAction(ApiClient.actionIdOf(accepted[0]));
      expect(done.status).toBe('SUCCEEDED');
      expect(await nodesOf(api, clusterId)).toHaveLength(round + 1);
    }
    const actions = await api.get(`/v1/actions?target=${clusterId}&action=CLUSTER_SCALE_OUT`);
    expect(actions.body.actions).toHaveLength(3);
  });

  it('accepts scale-outs of different clusters sent at once', async () => {
    const api = await demoApi(trellis);
    const ids = await Promise.all(['par-a', 'par-b', 'par-c'].map(async (n) => (await createProfileAndCluster(api, n)).clusterId));
    const answers = await Promise.all(ids.map((id) => api.post(`/v1/clusters/${id}/actions`, { scale_out: { count: 2 } })));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    const done = await Promise.all(answers.map((r) => api.waitForAction(ApiClient.actionIdOf(r))));
    expect(done.map((a) => a.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  });
});
