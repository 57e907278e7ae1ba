import type { Embedded } from '../../cli/embedded';
import { ApiClient } from '../support/api-client';
import { act, createPolicy } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf, olderWorkerUp, scaleOut } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

describe('scale-out through the whole pipeline (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    trellis = t.trellis;
    api = await demoApi(trellis);
  });
  afterAll(() => t?.close());

  it('answers 202 with a Location, ends SUCCEEDED with 2 ACTIVE servers recorded on their nodes', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'web');
    const action = await scaleOut(api, 'web', 2);
    expect(action).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Cluster scaling succeeded.', action: 'CLUSTER_SCALE_OUT' });
    expect(action.outputs.nodes_added).toHaveLength(2);

    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(2);
    for (const n of nodes) {
      expect(n.status).toBe('ACTIVE');
      expect(n.physical_id).toEqual(expect.any(String));
      expect(n.data.placement.zone).toMatch(/^az[12]$/);
      expect(n.data.placement.host).toEqual(expect.any(String));
    }
    const { servers: all } = trellis.simulator!.state.snapshot() as { servers: Array<{ id: string; status: string }> };
    const servers = all.filter((s) => s.status === 'ACTIVE');
    expect(servers.map((s) => s.id).sort()).toEqual(nodes.map((n) => n.physical_id).sort());

    const cluster = await api.get(`/v1/clusters/${clusterId}`);
    expect(cluster.body.cluster).toMatchObject({ status: 'ACTIVE', desired_capacity: 2 });
    expect(cluster.body.cluster.nodes.sort()).toEqual(nodes.map((n) => n.id).sort());

    // one NODE_CREATE event per new node (Senlin's derived node actions), beside the action's own
    const events = await api.get(`/v1/events?cluster_id=${clusterId}&otype=NODE&action=NODE_CREATE`);
    expect(events.status).toBe(200);
    expect(events.body.events.map((e: Record<string, unknown>) => [e.oid, e.oname, e.status]).sort()).toEqual(
      nodes.map((n) => [n.id, n.name, 'end']).sort(),
    );
  });

  it('sends the profile once per work order, not once per server: 40 servers of a profile with 45 KB of user_data', async () => {
    // 45 KB of user_data: 60 KB in base64 as Nova takes it, within its 65,535 characters
    const userData = '#!/bin/sh\n' + 'echo trellis\n'.repeat(3450);
    const { clusterId } = await createProfileAndCluster(api, 'big', 0, {}, { user_data: userData });
    const action = await scaleOut(api, 'big', 40, 120_000);
    expect(action.status).toBe('SUCCEEDED');

    // every server booted with the profile's user_data
    const nodes = await nodesOf(api, clusterId);
    const booted = trellis.simulator!.state.servers().filter((s) => nodes.some((n) => n.physical_id === s.id));
    expect(booted).toHaveLength(40);
    expect(booted.every((s) => s.userData === Buffer.from(userData).toString('base64'))).toBe(true);

    // the order the worker took (and the engine wrote to its outbox) holds the profile once: with
    // the profile on each server (work orders of schema_version 1) it was 1.94 MB
    const [order] = await trellis.infra.database.dataSource.query(
      `SELECT octet_length(payload::text) AS bytes, payload->>'schema_version' AS version FROM work_orders WHERE action_id = $1`,
      [action.id],
    );
    expect(order.version).toBe('2');
    expect(Number(order.bytes)).toBeGreaterThan(userData.length);
    expect(Number(order.bytes)).toBeLessThan(userData.length + 40 * 400);
  });

  it('writes work orders as version 1 while a nova-worker of the release before is up (a rolling upgrade in any order), version 2 once it is gone', async () => {
    const userData = '#!/bin/sh\necho upgrade\n';
    const { clusterId } = await createProfileAndCluster(api, 'upgrade', 0, {}, { user_data: userData });
    const ds = trellis.infra.database.dataSource;
    const versionOf = async (actionId: string) =>
      (await ds.query(`SELECT payload FROM work_orders WHERE action_id = $1`, [actionId]))[0].payload as {
        schema_version: number;
        profile?: Record<string, unknown>;
        create_servers: Array<{ profile?: Record<string, unknown> }>;
      };
    // a nova-worker of the release before: its row renewed, naming no versions
    const olderGone = await olderWorkerUp(trellis, '00000000-0000-4000-8000-0000000000aa');
    expect(trellis.engine.workOrderVersions.current).toBe(1);
    const first = await scaleOut(api, 'upgrade', 3);
    expect(first.status).toBe('SUCCEEDED');
    const v1 = await versionOf(first.id);
    expect(v1.schema_version).toBe(1);
    expect(v1.profile).toBeUndefined();
    expect(v1.create_servers).toHaveLength(3);
    expect(v1.create_servers.every((c) => c.profile?.user_data === userData)).toBe(true);

    // the older worker stopped (its row removed on a clean stop): the engine's next look writes version 2
    await olderGone();
    expect(trellis.engine.workOrderVersions.current).toBe(2);
    const second = await scaleOut(api, 'upgrade', 2);
    expect(second.status).toBe('SUCCEEDED');
    const v2 = await versionOf(second.id);
    expect(v2.schema_version).toBe(2);
    expect(v2.profile?.user_data).toBe(userData);
    expect(v2.create_servers.every((c) => c.profile === undefined)).toBe(true);

    // both orders' servers booted from the profile
    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(5);
    const booted = trellis.simulator!.state.servers().filter((s) => nodes.some((n) => n.physical_id === s.id));
    expect(booted.map((s) => s.userData)).toEqual(Array(5).fill(Buffer.from(userData).toString('base64')));
  });

  it("starts a bound scaling policy's cooldown when its scale-out ends: the next one is refused (409 ActionCooldown)", async () => {
    await createProfileAndCluster(api, 'cool');
    const policy = await createPolicy(api, 'cool-scaling', {
      type: 'senlin.policy.scaling',
      version: 1.0,
      properties: { event: 'CLUSTER_SCALE_OUT', adjustment: { type: 'CHANGE_IN_CAPACITY', number: 1, cooldown: 300 } },
    });
    expect((await act(api, 'cool', { policy_attach: { policy_id: policy } })).status).toBe('SUCCEEDED');
    expect((await scaleOut(api, 'cool', 1)).status).toBe('SUCCEEDED');

    const again = await api.post('/v1/clusters/cool/actions', { scale_out: { count: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.error.type).toBe('ActionCooldown');
  });
});

describe('a build Nova cannot place (embedded default)', () => {
  let t: TestTrellis;
  let trellis: Embedded;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis({ topology: { zones: [{ name: 'az1', hosts: [{ name: 'only-host', capacity: { instances: 1 } }] }] } });
    trellis = t.trellis;
    api = await demoApi(trellis);
  });
  afterAll(() => t?.close());

  it('ends FAILED with Nova\'s NoValidHost fault as the reason', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'db');
    const action = await scaleOut(api, 'db', 2);
    expect(action.status).toBe('FAILED');
    expect(action.status_reason).toContain('No valid host was found. There are not enough hosts available.');
    const nodes = await nodesOf(api, clusterId);
    expect(nodes.map((n) => n.status).sort()).toEqual(['ACTIVE', 'ERROR']);
    expect(nodes.find((n) => n.status === 'ERROR')!.status_reason).toContain('No valid host was found');
  });
});
