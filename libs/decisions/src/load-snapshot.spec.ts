import { createHash, randomUUID } from 'node:crypto';
import type { ActionEntity, Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { HYPERVISOR_FREE_POLICY_TYPES, MEMBER_FREE_POLICY_TYPES, PolicyRegistry, readsHypervisors } from '@trellis/policies';
import { loadBindings, loadCloud, loadCluster, loadSnapshot, seedOf } from './load-snapshot';

/**
 * The decision's input as the engine reads it. Expected values are written out by hand from the
 * rows inserted here, so the loader's SQL (which builds the JSON itself) is checked against what a
 * policy must see, edge cases included.
 */
describe('loadSnapshot', () => {
  let db: Database;
  const ids = {
    profile: randomUUID(),
    cluster: randomUUID(),
    other: randomUUID(),
    policyA: randomUUID(),
    policyB: randomUUID(),
    bindingA: randomUUID(),
    bindingB: randomUUID(),
    nodes: [randomUUID(), randomUUID(), randomUUID(), randomUUID()],
  };
  const profileSpec = { type: 'os.nova.server', version: '1.0', properties: { flavor: 'm1.tiny', image: 'cirros' } };
  const zoneSpec = { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }] } };
  const scalingSpec = { type: 'senlin.policy.scaling', version: '1.0', properties: { event: 'CLUSTER_SCALE_OUT', adjustment: { number: 1.0 } } };

  const groupOfP = { id: 'g', name: 'web-group', policy: 'anti-affinity', rules: {}, members: ['srv-1'] };
  const groupOfQ = { id: 'alt-secret-group', name: 'secret', policy: 'affinity', rules: {}, members: ['srv-q'] };
  /** a group as a snapshot lists it where no bound policy reads the members */
  const listed = ({ members: _, ...group }: { members: string[] } & Record<string, unknown>) => group;

  beforeAll(async () => {
    db = await openTestDatabase();
    const q = (sql: string, params: unknown[]) => db.dataSource.query(sql, params);
    await q(
      `INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, 'web', 'os.nova.server-1.0', $2, 'p', 'u', '2026-01-02T03:04:05.678901Z')`,
      [ids.profile, profileSpec],
    );
    for (const [id, name] of [[ids.cluster, 'web'], [ids.other, 'other']]) {
      await q(
        `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
         VALUES ($1, $2, $3, 'p', 'u', 1, -1, 4, 3600, 'ACTIVE')`,
        [id, name, ids.profile],
      );
    }
    const node = (id: string, index: number, extra: Record<string, unknown>) =>
      q(
        `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", physical_id, index, status, data, metadata, tainted, created_at)
         VALUES ($1, $2, $3, $4, 'p', 'u', $5, $6, $7, $8, $9, $10, $11)`,
        [id, `node-${index}`, extra.cluster ?? ids.cluster, ids.profile, extra.physical_id ?? null, index, extra.status ?? 'ACTIVE',
          extra.data === undefined ? {} : extra.data, extra.metadata ?? {}, extra.tainted ?? false, extra.created_at ?? null],
      );
    // inserted out of index order: the snapshot lists nodes by index
    await node(ids.nodes[2], 3, { data: { placement: 'not an object' }, created_at: '2026-05-06T07:08:09Z', status: 'ERROR' });
    await node(ids.nodes[0], 1, {
      physical_id: 'srv-1',
      data: { placement: { zone: 'az1', host: 'host-1', servergroup: 'g' }, weights: [1.5, 2] },
      metadata: { roles: ['db'] },
      created_at: '2026-05-06T07:08:09.123456Z',
    });
    await node(ids.nodes[1], 2, { data: { placement: { zone: 7, host: null } }, tainted: true });
    await node(ids.nodes[3], 1, { cluster: ids.other });
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'zones', 'senlin.policy.zone_placement-1.0', $2, 'p', 'u', now())`, [ids.policyA, zoneSpec]);
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'scale', 'senlin.policy.scaling-1.0', $2, 'p', 'u', now())`, [ids.policyB, scalingSpec]);
    await q(
      `INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, last_op, attached_at)
       VALUES ($1, $2, $3, true, 300, $4, NULL, '2026-03-01T00:00:00.5Z'), ($5, $2, $6, false, 100, '{}', '2026-04-01T10:00:00.999999Z', '2026-03-02T00:00:00Z')`,
      [ids.bindingA, ids.cluster, ids.policyA, { ZonePlacementPolicy: { version: '1.0' } }, ids.bindingB, ids.policyB],
    );
    await q(
      `INSERT INTO cloud_facts (kind, project, data, fetched_at)
       VALUES ('availability_zones', '', $1, now()), ('hypervisors', '', $2, now()), ('host_zones', '', $3, now()),
              ('server_groups', 'p', $4, now()), ('server_groups', 'q', $5, now())`,
      [
        { items: [{ zoneName: 'az1', zoneState: { available: true } }] },
        { error: 'Policy does not allow os_compute_api:os-hypervisors to be performed.' },
        { items: [{ zoneName: 'az1', hosts: ['host-1'] }] },
        { items: [groupOfP] },
        { items: [groupOfQ] },
      ],
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  const expectedNodes = () => [
    {
      id: ids.nodes[0],
      name: 'node-1',
      index: 1,
      status: 'ACTIVE',
      created_at: '2026-05-06T07:08:09.123Z',
      profile_created_at: '2026-01-02T03:04:05.678Z',
      tainted: false,
      data: { placement: { zone: 'az1', host: 'host-1', servergroup: 'g' }, weights: [1.5, 2] },
      metadata: { roles: ['db'] },
      physical_id: 'srv-1',
      server: { availability_zone: 'az1', host: 'host-1' },
    },
    {
      id: ids.nodes[1],
      name: 'node-2',
      index: 2,
      status: 'ACTIVE',
      created_at: null,
      profile_created_at: '2026-01-02T03:04:05.678Z',
      tainted: true,
      data: { placement: { zone: 7, host: null } },
      metadata: {},
      physical_id: null,
      server: { availability_zone: null, host: null },
    },
    {
      id: ids.nodes[2],
      name: 'node-3',
      index: 3,
      status: 'ERROR',
      created_at: '2026-05-06T07:08:09.000Z',
      profile_created_at: '2026-01-02T03:04:05.678Z',
      tainted: false,
      data: { placement: 'not an object' },
      metadata: {},
      physical_id: null,
      server: { availability_zone: null, host: null },
    },
  ];

  // SHA-256 of the spec's jsonb text: keys shorter first, then by bytes, ', ' and ': ' between
  const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  const expectedPolicies = () => [
    {
      id: ids.policyB,
      name: 'scale',
      type: 'senlin.policy.scaling-1.0',
      spec: scalingSpec,
      spec_digest: sha256('{"type": "senlin.policy.scaling", "version": "1.0", "properties": {"event": "CLUSTER_SCALE_OUT", "adjustment": {"number": 1}}}'),
      enabled: false,
      binding_id: ids.bindingB,
      attached_at: '2026-03-02T00:00:00.000Z',
      binding_data: {},
      last_op: '2026-04-01T10:00:00.999Z',
    },
    {
      id: ids.policyA,
      name: 'zones',
      type: 'senlin.policy.zone_placement-1.0',
      spec: zoneSpec,
      spec_digest: sha256('{"type": "senlin.policy.zone_placement", "version": "1.0", "properties": {"zones": [{"name": "az1", "weight": 100}]}}'),
      enabled: true,
      binding_id: ids.bindingA,
      attached_at: '2026-03-01T00:00:00.500Z',
      binding_data: { ZonePlacementPolicy: { version: '1.0' } },
      last_op: null,
    },
  ];

  // zone placement and scaling never read the hypervisors nor a group's members: the snapshot carries
  // neither (nor the hypervisors' error)
  const expectedCloud = {
    availability_zones: [{ zoneName: 'az1', zoneState: { available: true } }],
    server_groups: [listed(groupOfP)],
  };
  // loadCloud's default: the members listed
  const expectedCloudWithMembers = { ...expectedCloud, server_groups: [groupOfP] };
  const expectedCloudWithHypervisors = {
    availability_zones: expectedCloud.availability_zones,
    hypervisors: [],
    server_groups: [groupOfP],
    unreadable: { hypervisors: 'Policy does not allow os_compute_api:os-hypervisors to be performed.' },
  };

  const action = (patch: Partial<ActionEntity> = {}) =>
    ({ id: randomUUID(), action: 'CLUSTER_SCALE_OUT', cluster_id: ids.cluster, target: ids.cluster, inputs: { count: 2 }, data: {}, project: 'p', ...patch }) as ActionEntity;

  it('reads the cluster, its nodes in index order, its bindings in chain order and the Nova facts', async () => {
    const a = action();
    const now = new Date('2026-11-22T05:00:00.250Z');
    const snapshot = await loadSnapshot(db.dataSource.manager, a, 'pre_op', now, { everyNode: true });
    // toStrictEqual: key for key, and no extra or undefined keys
    expect(snapshot).toStrictEqual({
      hook: 'pre_op',
      policies: expectedPolicies(),
      cluster: {
        id: ids.cluster,
        name: 'web',
        min_size: 1,
        max_size: -1,
        desired_capacity: 4,
        profile_id: ids.profile,
        profile: { type: 'os.nova.server-1.0', spec: profileSpec },
        nodes: expectedNodes(),
      },
      cloud: expectedCloud,
      action: { id: a.id, action: 'CLUSTER_SCALE_OUT', target: ids.cluster, inputs: { count: 2 }, data: {} },
      now: '2026-11-22T05:00:00.250Z',
      seed: seedOf(a.id),
    });
    // the same keys in the same order as the public evaluation format lists them
    expect(Object.keys(snapshot.cluster!.nodes[0])).toEqual(Object.keys(expectedNodes()[0]));
    expect(Object.keys(snapshot.policies[0])).toEqual(Object.keys(expectedPolicies()[0]));
  });

  it('gives the same parts through loadCluster, loadBindings and loadCloud', async () => {
    const m = db.dataSource.manager;
    expect((await loadCluster(m, ids.cluster))?.nodes).toStrictEqual(expectedNodes());
    expect(await loadBindings(m, ids.cluster)).toStrictEqual(expectedPolicies());
    expect(await loadCloud(m, 'p', false)).toStrictEqual(expectedCloudWithMembers);
    expect(await loadCloud(m, 'p', false, false)).toStrictEqual(expectedCloud);
    expect(await loadCloud(m, 'p', true)).toStrictEqual(expectedCloudWithHypervisors);
    expect(await loadCluster(m, randomUUID())).toBeNull();
    const other = await loadCluster(m, ids.other);
    expect(other?.nodes.map((n) => n.id)).toEqual([ids.nodes[3]]);
    expect(await loadBindings(m, ids.other)).toEqual([]);
  });

  it('has no cluster, bindings or nodes for a cluster that is gone, and still the facts', async () => {
    const snapshot = await loadSnapshot(db.dataSource.manager, action({ cluster_id: randomUUID() }), 'post_op', new Date());
    expect(snapshot.cluster).toBeNull();
    expect(snapshot.policies).toEqual([]);
    expect(snapshot.cloud).toStrictEqual(expectedCloud);
  });

  it("reads the cluster's project's server groups and the cloud-wide facts, never another project's, and no host_zones", async () => {
    const m = db.dataSource.manager;
    // the action's project does not matter while the cluster exists: the facts are the cluster's project's
    const snapshot = await loadSnapshot(m, action({ project: 'q' }), 'pre_op', new Date());
    expect(snapshot.cloud).toStrictEqual(expectedCloud);
    expect(JSON.stringify(snapshot)).not.toContain('alt-secret-group');
    expect(Object.keys(snapshot.cloud)).toEqual(['availability_zones', 'server_groups']);
    expect((await loadCloud(m, 'q', true)).server_groups).toEqual([groupOfQ]);
    expect((await loadCloud(m, 'nobody', true)).server_groups).toEqual([]);
    expect((await loadCloud(m, 'nobody', false)).availability_zones).toEqual(expectedCloud.availability_zones);
  });

  it("gives an action without a cluster its own project's facts", async () => {
    const m = db.dataSource.manager;
    const q = await loadSnapshot(m, action({ cluster_id: null, project: 'q' }), 'pre_op', new Date());
    expect(q.cloud.server_groups).toStrictEqual([listed(groupOfQ)]);
    const gone = await loadSnapshot(m, action({ cluster_id: randomUUID(), project: 'q' }), 'post_op', new Date());
    expect(gone.cloud.server_groups).toStrictEqual([listed(groupOfQ)]);
    // with the members where asked
    const judged = await loadSnapshot(m, action({ cluster_id: null, project: 'q' }), 'pre_op', new Date(), { groupMembers: true });
    expect(judged.cloud.server_groups).toStrictEqual([groupOfQ]);
  });

  it('carries the hypervisors exactly when a bound policy may read them, as readsHypervisors says', async () => {
    const m = db.dataSource.manager;
    const hypervisors = [{ id: 1, hypervisor_hostname: 'drs-host-1', service: { host: 'drs-host-1' }, state: 'up', status: 'enabled' }];
    await m.query(`UPDATE cloud_facts SET data = $1 WHERE kind = 'hypervisors'`, [{ items: hypervisors }]);
    const affinity = (properties: Record<string, unknown>) => ({ type: 'senlin.policy.affinity', version: '1.0', properties });
    const plugin = 'trellis.policy.role_anti_affinity';
    const saysFree = [...HYPERVISOR_FREE_POLICY_TYPES, plugin];
    const cases: Array<[string, string, unknown, (readonly string[])?]> = [
      ['affinity, DRS off by default', 'senlin.policy.affinity-1.0', affinity({ servergroup: { policies: 'anti-affinity' } })],
      ['affinity, DRS false', 'senlin.policy.affinity-1.0', affinity({ enable_drs_extension: false })],
      ['affinity, DRS true', 'senlin.policy.affinity-1.0', affinity({ enable_drs_extension: true })],
      ['affinity, DRS "true" (a string)', 'senlin.policy.affinity-1.0', affinity({ enable_drs_extension: 'true' })],
      ['affinity, DRS null', 'senlin.policy.affinity-1.0', affinity({ enable_drs_extension: null })],
      ['affinity, no properties', 'senlin.policy.affinity-1.0', { type: 'senlin.policy.affinity', version: '1.0' }],
      ['deletion', 'senlin.policy.deletion-1.1', { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: 'OLDEST_FIRST' } }],
      ['zone placement', 'senlin.policy.zone_placement-1.0', zoneSpec],
      ['scaling', 'senlin.policy.scaling-1.0', scalingSpec],
      ['a plugin', 'trellis.policy.role_anti_affinity-1.0', { type: plugin, version: '1.0', properties: {} }],
      ['a plugin that says it never reads them', 'trellis.policy.role_anti_affinity-1.0', { type: plugin, version: '1.0', properties: {} }, saysFree],
      ['another plugin, beside one that says so', 'x.policy.other-1.0', { type: 'x.policy.other', version: '1.0', properties: {} }, saysFree],
      ['affinity with DRS, beside a plugin that says so', 'senlin.policy.affinity-1.0', affinity({ enable_drs_extension: true }), saysFree],
      ['a type named like a built-in', 'senlin.policy.scaling_plus-1.0', { type: 'senlin.policy.scaling_plus', version: '1.0', properties: {} }],
    ];
    try {
      const seen: Array<[string, boolean, boolean]> = [];
      for (const [label, type, spec, hypervisorFreeTypes] of cases) {
        const cluster = randomUUID();
        const policy = randomUUID();
        await m.query(
          `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
           VALUES ($1, 'hv', $2, 'p', 'u', 0, -1, 0, 3600, 'ACTIVE')`,
          [cluster, ids.profile],
        );
        await m.query(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'hv', $2, $3, 'p', 'u', now())`, [policy, type, spec]);
        // beside a policy that never reads them, and disabled: a binding that might be enabled again counts
        await m.query(
          `INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at)
           VALUES ($1, $2, $3, false, 300, '{}', now()), ($4, $2, $5, true, 100, '{}', now())`,
          [randomUUID(), cluster, policy, randomUUID(), ids.policyA],
        );
        const snapshot = await loadSnapshot(m, action({ cluster_id: cluster, target: cluster }), 'pre_op', new Date(), { hypervisorFreeTypes });
        seen.push([label, 'hypervisors' in snapshot.cloud, readsHypervisors({ type, spec }, hypervisorFreeTypes)]);
        if ('hypervisors' in snapshot.cloud) expect(snapshot.cloud.hypervisors).toEqual(hypervisors);
      }
      expect(seen).toEqual([
        ['affinity, DRS off by default', false, false],
        ['affinity, DRS false', false, false],
        ['affinity, DRS true', true, true],
        ['affinity, DRS "true" (a string)', true, true],
        ['affinity, DRS null', true, true],
        ['affinity, no properties', false, false],
        ['deletion', false, false],
        ['zone placement', false, false],
        ['scaling', false, false],
        ['a plugin', true, true],
        ['a plugin that says it never reads them', false, false],
        ['another plugin, beside one that says so', true, true],
        ['affinity with DRS, beside a plugin that says so', true, true],
        ['a type named like a built-in', true, true],
      ]);
    } finally {
      await m.query(`UPDATE cloud_facts SET data = $1 WHERE kind = 'hypervisors'`, [
        { error: 'Policy does not allow os_compute_api:os-hypervisors to be performed.' },
      ]);
    }
  });

  it("lists the server groups' members exactly when a bound policy, the policy being attached or drift judging may read them", async () => {
    const m = db.dataSource.manager;
    const plugin = 'trellis.policy.role_anti_affinity';
    const pluginSpec = { type: plugin, version: '1.0', properties: {} };
    const saysFree = [...MEMBER_FREE_POLICY_TYPES, plugin];
    const affinity = { type: 'senlin.policy.affinity', version: '1.0', properties: { enable_drs_extension: true } };
    const deletion = { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: 'OLDEST_FIRST' } };
    const policy = async (type: string, spec: unknown) => {
      const id = randomUUID();
      await m.query(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'mb', $2, $3, 'p', 'u', now())`, [id, type, spec]);
      return id;
    };
    const ofPlugin = await policy(`${plugin}-1.0`, pluginSpec);
    const ofOther = await policy('x.policy.other-1.0', { type: 'x.policy.other', version: '1.0', properties: {} });
    const ofDeletion = await policy('senlin.policy.deletion-1.1', deletion);
    const ofAffinity = await policy('senlin.policy.affinity-1.0', affinity);
    // every built-in type bound, one of them disabled (a binding that might be enabled again counts), then the case's own
    const cluster = async (extra: string[]) => {
      const id = randomUUID();
      await m.query(
        `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
         VALUES ($1, 'mb', $2, 'p', 'u', 0, -1, 0, 3600, 'ACTIVE')`,
        [id, ids.profile],
      );
      for (const [i, p] of [ids.policyA, ids.policyB, ofDeletion, ...extra].entries()) {
        await m.query(
          `INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, $4, $5, '{}', now())`,
          [randomUUID(), id, p, i !== 1, 100 * (i + 1)],
        );
      }
      return id;
    };
    const builtIns = await cluster([]);
    const withPlugin = await cluster([ofPlugin]);
    const withTwo = await cluster([ofPlugin, ofOther]);
    const on = (id: string, patch: Partial<ActionEntity> = {}) => action({ cluster_id: id, target: id, ...patch });
    const attach = (id: string, policyId: string) => on(id, { action: 'CLUSTER_ATTACH_POLICY', inputs: { policy_id: policyId } });
    const cases: Array<[string, ActionEntity, Parameters<typeof loadSnapshot>[4]]> = [
      ['built-in types only', on(builtIns), {}],
      ['built-in types only, post_op', on(builtIns), {}],
      ['a plugin', on(withPlugin), {}],
      ['a plugin that says it never reads them', on(withPlugin), { memberFreeTypes: saysFree }],
      ['another plugin, beside one that says so', on(withTwo), { memberFreeTypes: saysFree }],
      ["the registry's list (every plugin reads them unless it says so)", on(withPlugin), { memberFreeTypes: PolicyRegistry.withBuiltins().memberFreeTypes() }],
      ['CLUSTER_CHECK of built-in types', on(builtIns, { action: 'CLUSTER_CHECK', inputs: {} }), {}],
      ['CLUSTER_REPAIR of built-in types', on(builtIns, { action: 'CLUSTER_REPAIR', inputs: {} }), {}],
      ['drift judged on the snapshot (groupMembers)', on(builtIns), { groupMembers: true }],
      ['attaching a plugin to built-in types', attach(builtIns, ofPlugin), {}],
      ['attaching a plugin that says it never reads them', attach(builtIns, ofPlugin), { memberFreeTypes: saysFree }],
      ['attaching DRS affinity to built-in types', attach(builtIns, ofAffinity), {}],
      ['attaching a policy that does not exist', attach(builtIns, randomUUID()), {}],
      ['an action without a cluster', action({ cluster_id: null }), {}],
    ];
    const seen: Array<[string, boolean, boolean]> = [];
    for (const [label, a, options] of cases) {
      const hook = label.endsWith('post_op') ? 'post_op' : 'pre_op';
      const snapshot = await loadSnapshot(m, a, hook, new Date(), options);
      const groups = snapshot.cloud.server_groups as Array<Record<string, unknown>>;
      const members = groups.every((g) => 'members' in g);
      // a group's other keys stay either way
      expect(groups).toStrictEqual([members ? groupOfP : listed(groupOfP)]);
      seen.push([label, members, 'hypervisors' in snapshot.cloud]);
    }
    expect(seen).toEqual([
      ['built-in types only', false, false],
      ['built-in types only, post_op', false, false],
      ['a plugin', true, true],
      ['a plugin that says it never reads them', false, true],
      ['another plugin, beside one that says so', true, true],
      ["the registry's list (every plugin reads them unless it says so)", true, true],
      ['CLUSTER_CHECK of built-in types', true, false],
      ['CLUSTER_REPAIR of built-in types', true, false],
      ['drift judged on the snapshot (groupMembers)', true, false],
      ['attaching a plugin to built-in types', true, true],
      ['attaching a plugin that says it never reads them', false, true],
      ['attaching DRS affinity to built-in types', false, true],
      ['attaching a policy that does not exist', false, false],
      ['an action without a cluster', false, false],
    ]);

    // Nova's order, items that are not objects, groups without members and a fact the worker could
    // not read are passed through; only `members` goes
    const odd = [{ id: 'b', name: 'b', members: ['s1', 's2'], policy: 'affinity' }, 'not a group', { id: 'a', name: 'a' }, { id: 'c', members: null }];
    await m.query(`UPDATE cloud_facts SET data = $1 WHERE kind = 'server_groups' AND project = 'p'`, [{ items: odd }]);
    try {
      expect((await loadSnapshot(m, on(builtIns), 'pre_op', new Date())).cloud.server_groups).toStrictEqual([
        { id: 'b', name: 'b', policy: 'affinity' },
        'not a group',
        { id: 'a', name: 'a' },
        { id: 'c' },
      ]);
      expect((await loadSnapshot(m, on(withPlugin), 'pre_op', new Date())).cloud.server_groups).toStrictEqual(odd);
      await m.query(`UPDATE cloud_facts SET data = $1 WHERE kind = 'server_groups' AND project = 'p'`, [{ error: 'Nova said 503' }]);
      const failed = await loadSnapshot(m, on(builtIns), 'pre_op', new Date());
      expect(failed.cloud.server_groups).toEqual([]);
      expect(failed.cloud.unreadable).toEqual({ server_groups: 'Nova said 503' });
    } finally {
      await m.query(`UPDATE cloud_facts SET data = $1 WHERE kind = 'server_groups' AND project = 'p'`, [{ items: [groupOfP] }]);
    }
  });

  it("prefers the project's own row to a cloud-wide row of the same kind", async () => {
    const m = db.dataSource.manager;
    await m.query(`INSERT INTO cloud_facts (kind, project, data, fetched_at) VALUES ('server_groups', '', $1, now())`, [{ items: [groupOfQ] }]);
    try {
      expect((await loadCloud(m, 'p', false)).server_groups).toEqual([groupOfP]);
      expect((await loadSnapshot(m, action(), 'pre_op', new Date())).cloud.server_groups).toStrictEqual([listed(groupOfP)]);
    } finally {
      await m.query(`DELETE FROM cloud_facts WHERE kind = 'server_groups' AND project = ''`);
    }
  });

  it('reads, for an update to a new profile, the nodes it touches with their profiles and both profiles\' specs', async () => {
    const m = db.dataSource.manager;
    const next = randomUUID();
    const nextSpec = { ...profileSpec, properties: { ...profileSpec.properties, flavor: 'm1.small' } };
    await m.query(`INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, 'next', 'os.nova.server-1.0', $2, 'p', 'u', now())`, [next, nextSpec]);
    const profiles = { [ids.profile]: { type: 'os.nova.server-1.0', spec: profileSpec }, [next]: { type: 'os.nova.server-1.0', spec: nextSpec } };
    const member = (i: number, status: string, physical: string | null) => ({ id: ids.nodes[i], name: `node-${i + 1}`, status, physical_id: physical, profile_id: ids.profile });

    const cluster = await loadSnapshot(m, action({ action: 'CLUSTER_UPDATE', inputs: { new_profile_id: next } }), 'pre_op', new Date());
    expect(cluster.profile_update).toStrictEqual({
      profile: { id: next, type: 'os.nova.server-1.0', spec: nextSpec },
      nodes: [member(0, 'ACTIVE', 'srv-1'), member(1, 'ACTIVE', null), member(2, 'ERROR', null)],
      profiles,
    });
    const node = await loadSnapshot(m, action({ action: 'NODE_UPDATE', target: ids.nodes[0], inputs: { new_profile_id: next } }), 'pre_op', new Date());
    expect(node.profile_update?.nodes).toStrictEqual([member(0, 'ACTIVE', 'srv-1')]);
    expect(node.node).toMatchObject({ id: ids.nodes[0], physical_id: 'srv-1' });
    const gone = await loadSnapshot(m, action({ action: 'CLUSTER_UPDATE', inputs: { new_profile_id: randomUUID() } }), 'pre_op', new Date());
    expect(gone.profile_update?.profile).toBeNull();
    // other actions read none of it
    expect((await loadSnapshot(m, action(), 'pre_op', new Date())).profile_update).toBeUndefined();
  });
});
