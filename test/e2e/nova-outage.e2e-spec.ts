import { parseFaultSpec } from '../../apps/nova-simulator/src/faults';
import { ApiClient } from '../support/api-client';
import { createProfile, nodesOf, scaleOut } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

const TIMEOUT_S = 4;
const LEASE_S = 30;

/**
 * Every action ends: Nova answering 503 to every boot request for longer than any retry budget does
 * not lock the cluster for good. The worker keeps the order and backs off; the engine fails the
 * action at its timeout with "timed out after N s" and releases the cluster; once Nova is back, the
 * next action on the cluster is accepted and runs.
 */
describe('a Nova outage longer than the retry budget (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis({ env: { TRELLIS_RESUME_INTERVAL_SECONDS: '1', TRELLIS_LEASE_SECONDS: String(LEASE_S) } });
    api = await demoApi(t.trellis);
  });
  afterAll(() => t?.close());

  it('fails the action within its timeout plus one lease, marks its node, and the next action on the cluster runs', async () => {
    await createProfile(api, 'outage');
    const created = await api.post('/v1/clusters', {
      cluster: { name: 'outage', profile_id: 'outage', desired_capacity: 0, min_size: 0, max_size: -1, timeout: TIMEOUT_S },
    });
    expect(created.status).toBe(202);
    expect((await api.waitForAction(ApiClient.actionIdOf(created))).status).toBe('SUCCEEDED');
    const clusterId = created.body.cluster.id as string;

    const faults = t.trellis.simulator!.state.faults;
    faults.add(parseFaultSpec({ method: 'POST', path: '/servers$', status: 503, times: 100_000, body: { message: 'compute is down' } }));
    const failed = await scaleOut(api, clusterId, 1, (TIMEOUT_S + LEASE_S) * 1000);
    faults.clear();

    expect(failed.status).toBe('FAILED');
    expect(failed.status_reason).toBe(`CLUSTER_SCALE_OUT timed out after ${TIMEOUT_S} s.`);
    const took = failed.end_time - failed.start_time;
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_S);
    expect(took).toBeLessThanOrEqual(TIMEOUT_S + LEASE_S);
    const [node] = await nodesOf(api, clusterId);
    expect(node).toMatchObject({ status: 'ERROR', status_reason: failed.status_reason });
    process.stdout.write(`nova outage: scale-out FAILED ${took.toFixed(2)} s after it started (timeout ${TIMEOUT_S} s)\n`);

    const next = await scaleOut(api, clusterId, 1);
    expect(next.status).toBe('SUCCEEDED');
  });
});
