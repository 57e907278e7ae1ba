import type { Embedded } from '../../cli/embedded';
import { ApiClient } from '../support/api-client';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

describe('a webhook receiver scales a cluster out without a token (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    trellis = t.trellis;
    api = await demoApi(trellis);
  });
  afterAll(() => t?.close());

  it("runs CLUSTER_SCALE_OUT through the pipeline as the receiver's owner; the new node becomes ACTIVE", async () => {
    const { clusterId } = await createProfileAndCluster(api, 'hooked');
    const created = await api.post('/v1/receivers', {
      receiver: { name: 'scale-hook', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', params: { count: 1 } },
    });
    expect(created.status).toBe(201);
    const receiver = created.body.receiver;
    expect(receiver.channel.alarm_url).toBe(`${trellis.url}/v1/webhooks/${receiver.id}/trigger?V=2&count=1`);

    // what a monitoring system does with the alarm_url: a bare POST, no X-Auth-Token
    const res = await fetch(receiver.channel.alarm_url, { method: 'POST' });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { action: string };
    expect(res.headers.get('location')).toBe(`${trellis.url}/v1/actions/${body.action}`);

    const action = await api.waitForAction(body.action);
    expect(action).toMatchObject({ status: 'SUCCEEDED', action: 'CLUSTER_SCALE_OUT', user: receiver.user, project: receiver.project });
    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(1);
    expect(nodes[0].status).toBe('ACTIVE');
    expect(nodes[0].physical_id).toEqual(expect.any(String));
    const cluster = await api.get(`/v1/clusters/${clusterId}`);
    expect(cluster.body.cluster).toMatchObject({ status: 'ACTIVE', desired_capacity: 1 });

    // deleting the cluster deletes its receivers (Senlin's cluster delete), so the webhook is gone too
    const deleted = await api.call('DELETE', `/v1/clusters/${clusterId}`);
    expect(deleted.status).toBe(202);
    expect((await api.waitForAction(ApiClient.actionIdOf(deleted))).status).toBe('SUCCEEDED');
    expect((await api.get(`/v1/receivers/${receiver.id}`)).status).toBe(404);
    expect((await fetch(receiver.channel.alarm_url, { method: 'POST' })).status).toBe(404);
  });
});
