import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@trellis/common';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { ApiClient, keystoneToken } from '../support/api-client';
import { OpenStackCli, OpenStackCliError, acceptedActionId, locateOpenStackCli } from '../support/cli/openstack-cli';
import { freePort } from '../support/processes';

/**
 * Issue 3 §8: the real `openstack cluster ...` (Debian's python3-openstackclient and
 * python3-senlinclient) against the embedded default, authenticated through the simulator's
 * Keystone, whose catalog lists the gateway as the `clustering` endpoint. The CLI does the
 * discovery, microversion and name-or-id resolution itself; the REST API is only used to wait for
 * actions (the CLI's own `--wait` polls every 5 s) and to look at what the CLI does not print.
 */

const ZONE_POLICY_YAML = `type: senlin.policy.zone_placement
version: 1.0
properties:
  zones:
    - name: az1
      weight: 100
    - name: az2
      weight: 100
`;

const UNKNOWN_ZONE_POLICY_YAML = `type: senlin.policy.zone_placement
version: 1.0
properties:
  zones:
    - name: az9
`;

const PROFILE_YAML = `type: os.nova.server
version: 1.0
properties:
  flavor: m1.tiny
  image: cirros-fake
  networks: []
`;

describe('openstack cluster ... (python-senlinclient) against the embedded default', () => {
  let trellis: Embedded;
  let cli: OpenStackCli;
  let api: ApiClient;
  let specs: string;
  /** shared by the steps below, which run in order as one user session would */
  let clusterId: string;
  let policyId: string;

  beforeAll(async () => {
    const binary = locateOpenStackCli();
    const port = await freePort();
    trellis = await startEmbedded(
      loadConfig({
        TRELLIS_PORT: String(port),
        SIMULATOR_PORT: '0',
        TRELLIS_DATA_DIR: ':memory:',
        SIMULATOR_BUILD_DELAY_MS: '50',
        // the pollers' idle cost competes with the CLI's ~2.5 s Python start-up on two cores
        TRELLIS_POLL_INTERVAL_MS: '250',
        LOG_LEVEL: 'error',
      }),
    );
    const authUrl = trellis.simulator!.authUrl;
    cli = new OpenStackCli(binary, { authUrl, username: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(trellis.url, await keystoneToken(authUrl, { name: 'demo', password: 'demo', project: 'demo' }));
    specs = mkdtempSync(join(tmpdir(), 'trellis-cli-specs-'));
    writeFileSync(join(specs, 'zones.yaml'), ZONE_POLICY_YAML);
    writeFileSync(join(specs, 'unknown-zone.yaml'), UNKNOWN_ZONE_POLICY_YAML);
    writeFileSync(join(specs, 'profile.yaml'), PROFILE_YAML);
  });
  afterAll(() => trellis?.close());

  /** The newest action of that kind on the target, once it finished. */
  async function finishedActionOn(target: string, action: string) {
    const res = await api.get(`/v1/actions?target=${target}&action=${action}&sort=created_at:desc&limit=1`);
    if (res.status !== 200 || res.body.actions.length !== 1) throw new Error(`no ${action} on ${target}: ${res.status} ${JSON.stringify(res.body)}`);
    return api.waitForAction(res.body.actions[0].id);
  }

  async function nodesOfCluster() {
    const res = await api.get(`/v1/nodes?cluster_id=${clusterId}`);
    return res.body.nodes as Array<{ id: string; status: string; status_reason: string; data: { placement?: { zone?: string } } }>;
  }

  it('lists and shows policy types', async () => {
    const types = await cli.json<Array<{ name: string; version: string; support_status: string }>>(['cluster', 'policy', 'type', 'list']);
    const zone = await cli.json(['cluster', 'policy', 'type', 'show', 'senlin.policy.zone_placement-1.0']);
    expect(types).toContainEqual({
      name: 'senlin.policy.zone_placement',
      version: '1.0',
      support_status: 'EXPERIMENTAL since 2016.04\nSUPPORTED since 2016.10',
    });
    expect(types.map((t) => `${t.name}-${t.version}`)).toEqual(expect.arrayContaining(['senlin.policy.scaling-1.0', 'senlin.policy.deletion-1.1', 'senlin.policy.affinity-1.0']));
    expect(zone).toMatchObject({ name: 'senlin.policy.zone_placement-1.0', schema: { zones: { type: 'List' } } });
    expect(zone.support_status['1.0']).toContainEqual({ status: 'SUPPORTED', since: '2016.10' });
  });

  it('validates, creates, lists, shows and renames a policy from a YAML spec file', async () => {
    const validated = await cli.json(['cluster', 'policy', 'validate', '--spec-file', 'zones.yaml'], specs);
    const refusal = await cli.run(['cluster', 'policy', 'create', '--spec-file', 'unknown-zone.yaml', 'nowhere'], specs).catch((e: unknown) => e);
    expect(validated).toMatchObject({ name: 'validated_policy', type: 'senlin.policy.zone_placement-1.0', id: null });
    expect(refusal).toBeInstanceOf(OpenStackCliError);
    expect((refusal as OpenStackCliError).stderr).toContain("400: Client Error for url: http://127.0.0.1:");
    expect((refusal as OpenStackCliError).stderr).toContain("The specified name '['az9']' could not be found.");

    const created = await cli.json(['cluster', 'policy', 'create', '--spec-file', 'zones.yaml', 'zones'], specs);
    expect(created).toMatchObject({ name: 'zones', type: 'senlin.policy.zone_placement-1.0' });
    // the CLI prints the spec as indented JSON text; YAML's `version: 1.0` arrived as a number
    expect(JSON.parse(created.spec)).toEqual({
      type: 'senlin.policy.zone_placement',
      version: 1,
      properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] },
    });
    policyId = created.id;

    const list = await cli.json<Array<{ id: string; name: string; type: string }>>(['cluster', 'policy', 'list']);
    const shown = await cli.json(['cluster', 'policy', 'show', 'zones']);
    expect(list).toEqual([expect.objectContaining({ id: policyId.slice(0, 8), name: 'zones', type: 'senlin.policy.zone_placement-1.0' })]);
    expect(shown).toMatchObject({ id: policyId, name: 'zones' });

    const renamed = await cli.json(['cluster', 'policy', 'update', '--name', 'zones-ab', 'zones']);
    expect(renamed).toMatchObject({ id: policyId, name: 'zones-ab' });
  });

  it('creates, lists and shows a profile and a cluster', async () => {
    const profile = await cli.json(['cluster', 'profile', 'create', '--spec-file', 'profile.yaml', 'web-profile'], specs);
    expect(profile).toMatchObject({ name: 'web-profile', type: 'os.nova.server-1.0' });
    const profiles = await cli.json<Array<{ name: string }>>(['cluster', 'profile', 'list']);
    const shownProfile = await cli.json(['cluster', 'profile', 'show', 'web-profile']);
    expect(profiles.map((p) => p.name)).toEqual(['web-profile']);
    expect(shownProfile).toMatchObject({ id: profile.id, name: 'web-profile' });

    // the CLI sends sizes as strings ("0", "10") and the profile as typed (a name)
    const created = await cli.json(['cluster', 'create', '--profile', 'web-profile', '--min-size', '0', '--max-size', '10', '--metadata', 'tier=web', 'web']);
    expect(created).toMatchObject({ name: 'web', profile_id: profile.id, min_size: 0, max_size: 10, desired_capacity: 0 });
    clusterId = created.id;
    expect((await finishedActionOn(clusterId, 'CLUSTER_CREATE')).status).toBe('SUCCEEDED');

    const clusters = await cli.json<Array<{ id: string; name: string; status: string }>>(['cluster', 'list']);
    const shown = await cli.json(['cluster', 'show', 'web']);
    expect(clusters).toEqual([expect.objectContaining({ id: clusterId.slice(0, 8), name: 'web', status: 'ACTIVE' })]);
    expect(shown).toMatchObject({ id: clusterId, status: 'ACTIVE', profile_name: 'web-profile' });
    expect(JSON.parse(shown.metadata)).toEqual({ tier: 'web' });
  });

  it('attaches a policy, lists the binding and expands across both zones', async () => {
    const attach = await cli.run(['cluster', 'policy', 'attach', '--policy', 'zones-ab', 'web']);
    expect((await api.waitForAction(acceptedActionId(attach))).status).toBe('SUCCEEDED');
    const bindings = await cli.json(['cluster', 'policy', 'binding', 'list', 'web']);
    expect(bindings).toEqual([
      { policy_id: policyId.slice(0, 8), policy_name: 'zones-ab', policy_type: 'senlin.policy.zone_placement-1.0', is_enabled: true },
    ]);

    const expand = await cli.run(['cluster', 'expand', '--count', '2', 'web']);
    expect(expand).toMatch(/^Request accepted by action: [0-9a-f-]{36}$/m);
    const actionId = acceptedActionId(expand);
    await api.waitForAction(actionId);
    const action = await cli.json(['cluster', 'action', 'show', actionId]);
    expect(action).toMatchObject({ id: actionId, action: 'CLUSTER_SCALE_OUT', status: 'SUCCEEDED', target_id: clusterId, cluster_id: clusterId });
    expect(JSON.parse(action.inputs)).toEqual({ count: 2 });

    const nodes = await cli.json<Array<{ id: string; status: string; cluster_id: string }>>(['cluster', 'node', 'list', '--cluster', 'web']);
    expect(nodes).toHaveLength(2);
    for (const n of nodes) expect(n).toMatchObject({ status: 'ACTIVE', cluster_id: clusterId.slice(0, 8) });
    // equal weights over two zones: one node in each, as the attached policy decided
    expect((await nodesOfCluster()).map((n) => n.data.placement?.zone).sort()).toEqual(['az1', 'az2']);
  });

  it('disables the binding with binding update', async () => {
    const update = await cli.run(['cluster', 'policy', 'binding', 'update', '--policy', 'zones-ab', '--enabled', 'false', 'web']);
    expect((await api.waitForAction(acceptedActionId(update))).status).toBe('SUCCEEDED');
    const binding = await cli.json(['cluster', 'policy', 'binding', 'show', '--policy', 'zones-ab', 'web']);
    expect(binding).toMatchObject({ policy_id: policyId, cluster_name: 'web', is_enabled: false });
  });

  it('shrinks and resizes', async () => {
    const shrink = await cli.run(['cluster', 'shrink', '--count', '1', 'web']);
    expect(await api.waitForAction(acceptedActionId(shrink))).toMatchObject({ action: 'CLUSTER_SCALE_IN', status: 'SUCCEEDED' });

    const resize = await cli.run(['cluster', 'resize', '--capacity', '3', '--max-size', '5', 'web']);
    expect(await api.waitForAction(acceptedActionId(resize))).toMatchObject({ action: 'CLUSTER_RESIZE', status: 'SUCCEEDED' });
    expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({ desired_capacity: 3, max_size: 5, status: 'ACTIVE' });
    expect((await nodesOfCluster()).map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
  });

  it('creates, shows and deletes a node in the cluster', async () => {
    const created = await cli.json(['cluster', 'node', 'create', '--profile', 'web-profile', '--cluster', 'web', 'extra']);
    expect(created).toMatchObject({ name: 'extra', cluster_id: clusterId });
    expect((await finishedActionOn(created.id, 'NODE_CREATE')).status).toBe('SUCCEEDED');
    const shown = await cli.json(['cluster', 'node', 'show', 'extra']);
    expect(shown).toMatchObject({ id: created.id, status: 'ACTIVE', cluster_id: clusterId, profile_name: 'web-profile' });
    expect(shown.physical_id).toEqual(expect.any(String));

    const deleted = await cli.run(['cluster', 'node', 'delete', 'extra']);
    expect(deleted).toContain('extra: accepted by action');
    expect((await api.waitForAction(acceptedActionId(deleted))).status).toBe('SUCCEEDED');
    expect((await api.get(`/v1/nodes/${created.id}`)).status).toBe(404);
  });

  it('renames the cluster and changes its timeout with cluster update', async () => {
    const updated = await cli.json(['cluster', 'update', '--name', 'web2', '--timeout', '120', 'web']);
    expect(updated.id).toBe(clusterId);
    const action = await finishedActionOn(clusterId, 'CLUSTER_UPDATE');
    expect(action).toMatchObject({ status: 'SUCCEEDED', inputs: { name: 'web2', timeout: 120 } });
    expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({ name: 'web2', timeout: 120, status: 'ACTIVE' });
  });

  it('reboots the server of every member with cluster op', async () => {
    const out = await cli.run(['cluster', 'op', '--operation', 'reboot', '--params', 'type=SOFT', 'web2']);
    const action = await api.waitForAction(acceptedActionId(out));
    expect(action).toMatchObject({ action: 'CLUSTER_OPERATION', status: 'SUCCEEDED', status_reason: "Cluster operation 'reboot' completed." });
    expect(action.inputs).toMatchObject({ operation: 'reboot', params: { type: 'SOFT' } });
    expect(action.inputs.nodes).toHaveLength(3);
    expect((await nodesOfCluster()).map((n) => n.status_reason)).toEqual(Array(3).fill("Operation 'reboot' succeeded"));
  });

  it('detaches the policy', async () => {
    const detach = await cli.run(['cluster', 'policy', 'detach', '--policy', 'zones-ab', clusterId]);
    expect((await api.waitForAction(acceptedActionId(detach))).status).toBe('SUCCEEDED');
    expect(await cli.json(['cluster', 'policy', 'binding', 'list', clusterId])).toEqual([]);
  });

  it('lists actions and events', async () => {
    const actions = await cli.json<Array<{ action: string; status: string; cluster_id: string }>>([
      'cluster', 'action', 'list', '--filters', `cluster_id=${clusterId}`, '--sort', 'created_at:asc',
    ]);
    const events = await cli.json<Array<{ obj_type: string; obj_id: string; action: string; status: string; level: string }>>([
      'cluster', 'event', 'list', '--filters', 'otype=CLUSTER',
    ]);
    expect(actions.map((a) => a.action)).toEqual(
      expect.arrayContaining(['CLUSTER_CREATE', 'CLUSTER_ATTACH_POLICY', 'CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN', 'CLUSTER_RESIZE', 'CLUSTER_DETACH_POLICY']),
    );
    expect(actions[0]).toMatchObject({ action: 'CLUSTER_CREATE', status: 'SUCCEEDED', cluster_id: clusterId });
    expect(events).toContainEqual(expect.objectContaining({ obj_type: 'CLUSTER', obj_id: clusterId.slice(0, 8), action: 'CLUSTER_SCALE_OUT', status: 'end', level: '20' }));
    expect(events.every((e) => e.obj_type === 'CLUSTER')).toBe(true);
  });

  it('deletes the cluster, the profile and the policy', async () => {
    const deleted = await cli.run(['cluster', 'delete', clusterId]);
    expect((await api.waitForAction(acceptedActionId(deleted))).status).toBe('SUCCEEDED');
    const profileOut = await cli.run(['cluster', 'profile', 'delete', 'web-profile']);
    const policyOut = await cli.run(['cluster', 'policy', 'delete', 'zones-ab']);
    expect(profileOut).toContain("Profile deleted: ['web-profile']");
    expect(policyOut).toContain("Policy deleted: ['zones-ab']");
    const [clusters, profiles, policies] = await Promise.all([api.get('/v1/clusters'), api.get('/v1/profiles'), api.get('/v1/policies')]);
    expect([clusters.body.clusters, profiles.body.profiles, policies.body.policies]).toEqual([[], [], []]);
  });
});
