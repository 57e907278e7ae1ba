import { ApiClient } from '../support/api-client';
import { createProfileAndCluster, nodesOf, scaleOut } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Senlin's `max_nodes_per_cluster` and `max_clusters_per_project` are the deployment's to set
 * (TRELLIS_MAX_NODES_PER_CLUSTER, TRELLIS_MAX_CLUSTERS_PER_PROJECT; Senlin's 1000 and 100 by
 * default): the gateway's bounds and the engine's decisions both keep to them, and a decision's
 * stored input says which limit it was made under.
 */
describe('deployment limits: TRELLIS_MAX_NODES_PER_CLUSTER=5, TRELLIS_MAX_CLUSTERS_PER_PROJECT=2 (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis({ env: { TRELLIS_MAX_NODES_PER_CLUSTER: '5', TRELLIS_MAX_CLUSTERS_PER_PROJECT: '2' } });
    api = await demoApi(t.trellis);
  });
  afterAll(() => t?.close());

  it('bounds sizes and counts by 5 nodes, and clusters by 2, with Senlin\'s messages', async () => {
    const tooBig = await api.post('/v1/clusters', { cluster: { name: 'big', profile_id: 'none', desired_capacity: 6 } });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.message).toMatch(/desired_capacity/);

    const { clusterId } = await createProfileAndCluster(api, 'five', 3);
    const over = await api.post('/v1/clusters/five/actions', { scale_out: { count: 3 } });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toBe('The target capacity (6) is greater than the maximum number of nodes allowed per cluster (5).');
    const up = await scaleOut(api, 'five', 2);
    expect(up.status).toBe('SUCCEEDED');
    expect(await nodesOf(api, clusterId)).toHaveLength(5);

    // the engine decided under the same limit, and its stored input says so
    const decision = await api.get(`/v1/actions/${up.id}/decision`);
    expect(decision.status).toBe(200);
    expect(decision.body.decision.input.max_nodes_per_cluster).toBe(5);
    // evaluated again as stored, it decides the same
    const again = await api.post('/v1/evaluations', decision.body.decision.input);
    expect(again.status).toBe(200);
    expect(again.body.plan).toEqual(decision.body.decision.output.plan);
    expect(again.body.plan.create).toHaveLength(2);
    for (const bad of [0, 1.5, '5', 1_000_001]) {
      const refused = await api.post('/v1/evaluations', { ...decision.body.decision.input, max_nodes_per_cluster: bad });
      expect([refused.status, refused.body.error.message]).toEqual([400, expect.stringMatching(/max_nodes_per_cluster/)]);
    }

    await createProfileAndCluster(api, 'second');
    const third = await api.post('/v1/clusters', { cluster: { name: 'third', profile_id: 'second-profile', desired_capacity: 0 } });
    expect(third.status).toBe(500);
    expect(third.body.error).toMatchObject({ type: 'OverQuota', message: 'Quota exceeded for resources.' });
  });
});
