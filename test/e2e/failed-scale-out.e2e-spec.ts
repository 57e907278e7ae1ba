import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@trellis/common';
import { migratedPgliteTemplate } from '@trellis/testing/database';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { ApiClient } from '../support/api-client';
import { act, createPolicy } from '../support/placement.scenario';
import { nodesOf, scaleOut } from '../support/scale-out.scenario';
import { demoApi } from '../support/trellis';

const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';

/**
 * Issue 5, must-have 5: a scale-out that fails in Nova removes the ERROR nodes it created when the
 * cluster asks for it (a deletion policy with destroy_after_deletion, or config
 * cleanup_failed_nodes), and keeps them otherwise. One host with room for one server: the second
 * server of a scale-out of 2 fails with NoValidHost. Each test deletes its cluster to free the host.
 */
describe('a failed scale-out and the nodes it created (embedded default)', () => {
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-topology-'));
    const topology = join(dir, 'topology.json');
    writeFileSync(topology, JSON.stringify({ zones: [{ name: 'az1', hosts: [{ name: 'only-host', capacity: { instances: 1 } }] }] }));
    trellis = await startEmbedded(
      loadConfig({
        TRELLIS_PORT: '0',
        SIMULATOR_PORT: '0',
        TRELLIS_DATA_DIR: ':memory:',
        SIMULATOR_BUILD_DELAY_MS: '50',
        TRELLIS_POLL_INTERVAL_MS: '50',
        SIMULATOR_TOPOLOGY_FILE: topology,
        LOG_LEVEL: 'error',
      }),
      undefined,
      { pgliteTemplate: await migratedPgliteTemplate() },
    );
    api = await demoApi(trellis);
    const profile = await api.post('/v1/profiles', {
      profile: {
        name: 'tiny',
        spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } },
      },
    });
    if (profile.status !== 201) throw new Error(`profile create: ${profile.status} ${JSON.stringify(profile.body)}`);
  });
  afterAll(() => trellis?.close());

  async function cluster(name: string, config: Record<string, unknown> = {}): Promise<string> {
    const res = await api.post('/v1/clusters', { cluster: { name, profile_id: 'tiny', desired_capacity: 0, min_size: 0, max_size: -1, config } });
    if (res.status !== 202) throw new Error(`cluster create: ${res.status} ${JSON.stringify(res.body)}`);
    const created = await api.waitForAction(ApiClient.actionIdOf(res));
    if (created.status !== 'SUCCEEDED') throw new Error(`cluster create action: ${JSON.stringify(created)}`);
    return res.body.cluster.id;
  }

  async function deleteCluster(id: string): Promise<void> {
    const res = await api.call('DELETE', `/v1/clusters/${id}`);
    if (res.status !== 202) throw new Error(`cluster delete: ${res.status} ${JSON.stringify(res.body)}`);
    const done = await api.waitForAction(ApiClient.actionIdOf(res));
    if (done.status !== 'SUCCEEDED') throw new Error(`cluster delete action: ${JSON.stringify(done)}`);
  }

  const serverIds = () =>
    (trellis.simulator!.state.snapshot() as { servers: Array<{ id: string; status: string }> }).servers
      .filter((s) => s.status !== 'DELETED')
      .map((s) => s.id);

  async function failedScaleOut(clusterId: string, name: string) {
    const before = new Set(serverIds());
    const action = await scaleOut(api, name, 2);
    expect(action.status).toBe('FAILED');
    expect(action.status_reason).toContain(NO_VALID_HOST);
    const made = serverIds().filter((id) => !before.has(id));
    return { action, made, nodes: await nodesOf(api, clusterId) };
  }

  it('with a deletion policy (destroy_after_deletion true): deletes the ERROR node and its server, keeps the ACTIVE one', async () => {
    const id = await cluster('with-deletion');
    const policy = await createPolicy(api, 'destroy', {
      type: 'senlin.policy.deletion',
      version: 1.1,
      properties: { criteria: 'OLDEST_FIRST', destroy_after_deletion: true },
    });
    expect((await act(api, 'with-deletion', { policy_attach: { policy_id: policy } })).status).toBe('SUCCEEDED');

    const { action, nodes } = await failedScaleOut(id, 'with-deletion');
    expect(action.status_reason).toContain("(the 1 node(s) that failed were deleted, as the deletion policy 'destroy' has destroy_after_deletion true)");
    expect(action.outputs.failed_nodes_deleted).toHaveLength(1);
    const [gone] = action.outputs.failed_nodes_deleted as string[];
    expect(nodes.map((n) => n.status)).toEqual(['ACTIVE']);
    expect(nodes.map((n) => n.id)).not.toContain(gone);
    expect((await api.get(`/v1/nodes/${gone}`)).status).toBe(404);
    // the only server left in Nova is the ACTIVE node's
    expect(serverIds()).toEqual([nodes[0].physical_id]);

    const shown = await api.get(`/v1/clusters/${id}`);
    expect(shown.body.cluster).toMatchObject({ desired_capacity: 1, status: 'ACTIVE' });
    expect(shown.body.cluster.nodes).toEqual([nodes[0].id]);
    await deleteCluster(id);
  });

  it('without a deletion policy or config: keeps the ERROR node (today\'s behaviour)', async () => {
    const id = await cluster('without');
    const { action, nodes, made } = await failedScaleOut(id, 'without');
    expect(action.status_reason).not.toContain('were deleted');
    expect(nodes.map((n) => n.status).sort()).toEqual(['ACTIVE', 'ERROR']);
    expect(nodes.find((n) => n.status === 'ERROR')!.status_reason).toContain('No valid host was found');
    expect(made).toHaveLength(2);
    const shown = await api.get(`/v1/clusters/${id}`);
    expect(shown.body.cluster).toMatchObject({ desired_capacity: 2, status: 'WARNING' });
    await deleteCluster(id);
  });

  it('with config cleanup_failed_nodes true and no policy: deletes the ERROR node; false keeps it despite a deletion policy', async () => {
    const id = await cluster('by-config', { cleanup_failed_nodes: true });
    const first = await failedScaleOut(id, 'by-config');
    expect(first.action.status_reason).toContain("(the 1 node(s) that failed were deleted, as the cluster's config 'cleanup_failed_nodes' is true)");
    expect(first.nodes.map((n) => n.status)).toEqual(['ACTIVE']);
    expect((await api.get(`/v1/clusters/${id}`)).body.cluster.desired_capacity).toBe(1);
    await deleteCluster(id);

    const kept = await cluster('refused', { cleanup_failed_nodes: false });
    const policy = await createPolicy(api, 'destroy-too', { type: 'senlin.policy.deletion', version: 1.0, properties: {} });
    expect((await act(api, 'refused', { policy_attach: { policy_id: policy } })).status).toBe('SUCCEEDED');
    const second = await failedScaleOut(kept, 'refused');
    expect(second.action.status_reason).not.toContain('were deleted');
    expect(second.nodes.map((n) => n.status).sort()).toEqual(['ACTIVE', 'ERROR']);
    await deleteCluster(kept);
  });
});
