import type { Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { act, createPolicy, zoneSpec } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Tenancy: every object belongs to a project. A second project walks every endpoint against the
 * first project's profile, policy, cluster, binding, node, action, decision and event, and sees
 * only "not found" (or 403 where admin is needed) — and nothing it does changes them.
 */
describe('a second project cannot read or act on the first project\'s objects (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let a: ApiClient;
  let b: ApiClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestTrellis({ env: { SIMULATOR_BUILD_DELAY_MS: '20' } });
    trellis = t.trellis;
    const authUrl = trellis.simulator!.authUrl;
    a = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' }));
    b = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'alt_demo', password: 'demo', project: 'alt_demo' }));

    const { profileId, clusterId } = await createProfileAndCluster(a, 'private');
    ids.profile = profileId;
    ids.cluster = clusterId;
    ids.policy = await createPolicy(a, 'private-zones', zoneSpec);
    expect((await act(a, 'private', { policy_attach: { policy_id: 'private-zones' } })).status).toBe('SUCCEEDED');
    const out = await act(a, 'private', { scale_out: { count: 1 } });
    expect(out.status).toBe('SUCCEEDED');
    ids.action = out.id;
    ids.node = (await nodesOf(a, clusterId))[0].id;
    const events = await a.get(`/v1/events?cluster_id=${clusterId}`);
    ids.event = events.body.events[0].id;
  });
  afterAll(() => t?.close());

  const notFound = (res: { status: number; body: any }) => {
    expect(res.status).toBe(404);
    expect(res.body.error.type).toMatch(/NotFound/);
  };

  it('sees none of them by id, by name or in lists', async () => {
    for (const path of [
      `/v1/profiles/${ids.profile}`,
      '/v1/profiles/private-profile',
      `/v1/policies/${ids.policy}`,
      '/v1/policies/private-zones',
      `/v1/clusters/${ids.cluster}`,
      '/v1/clusters/private',
      `/v1/clusters/${ids.cluster}/policies`,
      `/v1/clusters/${ids.cluster}/policies/${ids.policy}`,
      `/v1/nodes/${ids.node}`,
      `/v1/actions/${ids.action}`,
      `/v1/actions/${ids.action}/decision`,
      `/v1/events/${ids.event}`,
    ]) {
      const res = await b.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      notFound(res);
    }
    for (const [path, key] of [
      ['/v1/profiles', 'profiles'],
      ['/v1/policies', 'policies'],
      ['/v1/clusters', 'clusters'],
      ['/v1/nodes', 'nodes'],
      ['/v1/actions', 'actions'],
      ['/v1/events', 'events'],
    ] as const) {
      const res = await b.get(path);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body[key])).not.toContain(ids.cluster);
      expect(JSON.stringify(res.body[key])).not.toContain(ids.profile);
      expect(JSON.stringify(res.body[key])).not.toContain(ids.policy);
    }
    expect((await b.get(`/v1/nodes?cluster_id=${ids.cluster}`)).status).toBe(400);
    expect((await b.get('/v1/clusters?global_project=true')).status).toBe(403);
  });

  it('cannot change, delete or act on any of them', async () => {
    const calls: Array<[string, string, unknown]> = [
      ['PATCH', `/v1/profiles/${ids.profile}`, { profile: { name: 'stolen' } }],
      ['DELETE', `/v1/profiles/${ids.profile}`, undefined],
      ['PATCH', `/v1/policies/${ids.policy}`, { policy: { name: 'stolen' } }],
      ['DELETE', `/v1/policies/${ids.policy}`, undefined],
      ['PATCH', `/v1/clusters/${ids.cluster}`, { cluster: { name: 'stolen' } }],
      ['DELETE', `/v1/clusters/${ids.cluster}`, undefined],
      ['POST', `/v1/clusters/${ids.cluster}/actions`, { scale_out: { count: 1 } }],
      ['POST', `/v1/clusters/${ids.cluster}/actions?dry_run=true`, { scale_out: { count: 1 } }],
      ['POST', `/v1/clusters/${ids.cluster}/actions`, { policy_detach: { policy_id: ids.policy } }],
      ['PATCH', `/v1/nodes/${ids.node}`, { node: { name: 'stolen' } }],
      ['DELETE', `/v1/nodes/${ids.node}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await b.call(method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    // references to the first project's objects inside a body are not found either
    const cluster = await b.post('/v1/clusters', { cluster: { name: 'mine', profile_id: ids.profile } });
    expect(cluster.status).toBe(400);
    expect(cluster.body.error.message).toBe(`The specified profile '${ids.profile}' could not be found.`);
    const node = await b.post('/v1/nodes', { node: { name: 'mine', profile_id: ids.profile } });
    expect(node.status).toBe(400);
    expect((await b.post(`/v1/actions/${ids.action}/replay`, {})).status).toBe(403);

    // and the first project still has everything as it was
    expect((await a.get(`/v1/clusters/${ids.cluster}`)).body.cluster.name).toBe('private');
    expect((await a.get(`/v1/profiles/${ids.profile}`)).body.profile.name).toBe('private-profile');
    expect((await a.get(`/v1/policies/${ids.policy}`)).body.policy.name).toBe('private-zones');
    expect((await a.get(`/v1/nodes/${ids.node}`)).status).toBe(200);
  });
});
