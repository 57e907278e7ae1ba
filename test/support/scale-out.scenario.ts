import { ApiClient } from './api-client';
import type { Embedded } from '../../cli/embedded';

/**
 * The flow of issue 2, written once and run on the embedded default (npm test) and on RabbitMQ +
 * PostgreSQL (npm run test:integration): profile → cluster → scale_out 2 → SUCCEEDED with two
 * ACTIVE servers recorded on their nodes.
 */
/** `extra`: more cluster fields; `properties`: more profile properties (a server name, scheduler hints). */
export async function createProfileAndCluster(
  api: ApiClient,
  name: string,
  desired = 0,
  extra: Record<string, unknown> = {},
  properties: Record<string, unknown> = {},
) {
  const profileId = await createProfile(api, `${name}-profile`, properties);
  const cluster = await api.post('/v1/clusters', {
    cluster: { name, profile_id: `${name}-profile`, desired_capacity: desired, min_size: 0, max_size: -1, ...extra },
  });
  if (cluster.status !== 202) throw new Error(`cluster create: ${cluster.status} ${JSON.stringify(cluster.body)}`);
  const created = await api.waitForAction(ApiClient.actionIdOf(cluster));
  if (created.status !== 'SUCCEEDED') throw new Error(`cluster create action: ${JSON.stringify(created)}`);
  return { profileId, clusterId: cluster.body.cluster.id as string };
}

/** A profile of a tiny server of the fake image without networks; `properties`: more profile properties. Its id. */
export async function createProfile(api: ApiClient, name: string, properties: Record<string, unknown> = {}): Promise<string> {
  const profile = await api.post('/v1/profiles', {
    profile: { name, spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [], ...properties } } },
  });
  if (profile.status !== 201) throw new Error(`profile create: ${profile.status} ${JSON.stringify(profile.body)}`);
  return profile.body.profile.id as string;
}

export async function scaleOut(api: ApiClient, cluster: string, count: number, timeoutMs = 60_000) {
  const res = await api.post(`/v1/clusters/${cluster}/actions`, { scale_out: { count } });
  if (res.status !== 202) throw new Error(`scale_out: ${res.status} ${JSON.stringify(res.body)}`);
  const actionId = ApiClient.actionIdOf(res);
  expect(res.body).toEqual({ action: actionId });
  return api.waitForAction(actionId, timeoutMs);
}

export async function nodesOf(api: ApiClient, clusterId: string): Promise<Array<Record<string, any>>> {
  const res = await api.get(`/v1/nodes?cluster_id=${clusterId}`);
  if (res.status !== 200) throw new Error(`nodes: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.nodes;
}

/**
 * A nova-worker of the release before, up: its `services` row renewed and naming no accepted
 * versions, so the embedded engine writes work orders in schema_version 1 from its next look on
 * (done here). Returns what takes it away again (its row removed, as a clean stop does, and looked at).
 */
export async function olderWorkerUp(trellis: Embedded, id: string): Promise<() => Promise<void>> {
  const ds = trellis.infra.database.dataSource;
  await ds.query(
    `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at) VALUES ($1, 'trellis-nova-worker', 'old-worker', 'trellis.nova-worker.orders', false, now(), now())`,
    [id],
  );
  await trellis.engine.workOrderVersions.refresh();
  return async () => {
    await ds.query('DELETE FROM services WHERE id = $1', [id]);
    await trellis.engine.workOrderVersions.refresh();
  };
}
