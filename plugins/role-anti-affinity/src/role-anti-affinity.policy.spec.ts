import * as path from 'path';
import { EvaluationInput, EvaluationPolicyInput, PolicyRegistry, validatePolicySpec } from '@trellis/policies';
import { evaluateAtTestTime as evaluate } from '@trellis/policies/testing/fixed-time';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';

const registry = PolicyRegistry.withBuiltins();
const loaded = loadPolicyPlugins(registry, [path.resolve(__dirname, '../index.ts')]);

const TYPE = 'trellis.policy.role_anti_affinity';
const spec = (properties: Record<string, unknown>) => ({ type: TYPE, version: '1.0', properties });
const profile = (metadata?: Record<string, unknown>) => ({
  type: 'os.nova.server-1.0',
  spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.small', ...(metadata ? { metadata } : {}) } },
});
const bindingData = (groups: Array<{ id: string; created?: boolean }>, policy = 'anti-affinity') => ({
  RoleAntiAffinityPolicy: {
    version: '1.0',
    data: { policy, groups: groups.map((g, i) => ({ id: g.id, name: `web-aa-${i + 1}`, created: g.created ?? true })) },
  },
});
const inGroup = (id: string, group: string | null, extra: Record<string, unknown> = {}) => ({
  id,
  status: 'ACTIVE',
  data: { placement: group ? { servergroup: group } : {} },
  ...extra,
});
const raa = (properties: Record<string, unknown>, binding: Record<string, unknown> | null, extra: Partial<EvaluationPolicyInput> = {}) => ({
  id: 'p-raa',
  name: 'raa',
  spec: spec(properties),
  binding_id: 'b-raa',
  binding_data: binding,
  ...extra,
});

function attach(properties: Record<string, unknown>, extra: Partial<EvaluationInput> = {}) {
  let n = 0;
  return evaluate(
    {
      hook: 'attach',
      policies: [raa(properties, null)],
      cluster: { id: 'c1', name: 'web', profile: profile({ roles: 'db' }) },
      cloud: { server_groups: [] },
      ...extra,
    },
    { registry, newId: (kind) => `new-${kind}-${++n}` },
  );
}

function preOp(input: Partial<EvaluationInput>) {
  return evaluate({ cloud: { availability_zones: ['az1', 'az2'], server_groups: [] }, ...input }, { registry });
}

describe('loading the plugin', () => {
  it('registers the type through loadPolicyPlugins beside the built-ins', () => {
    expect(loaded).toEqual(['trellis.policy.role_anti_affinity-1.0']);
    expect(registry.get('trellis.policy.role_anti_affinity-1.0').meta).toMatchObject({ priority: 300, singleton: true, bindingKey: 'RoleAntiAffinityPolicy' });
    // its decisions' snapshots carry no hypervisors (every hook below runs on a cloud without them)
    expect(registry.hypervisorFreeTypes()).toContain(TYPE);
    // nor the server groups' members (the attach below finds a group without them)
    expect(registry.memberFreeTypes()).toContain(TYPE);
    expect(() => loadPolicyPlugins(registry, [path.resolve(__dirname, '../index.ts')])).toThrow(
      'trellis.policy.role_anti_affinity-1.0 is already registered by RoleAntiAffinityPolicy',
    );
  });
});

describe('role anti-affinity validate', () => {
  it('defaults ratio to 1 and policy to anti-affinity', () => {
    expect(validatePolicySpec(spec({ roles: ['db'] }), { registry, cloud: null }).policy.properties).toEqual({
      roles: ['db'],
      ratio: 1,
      policy: 'anti-affinity',
    });
  });

  it.each([
    [{}, 'properties.roles', "properties.roles: Required spec item 'roles' not provided"],
    [{ roles: [] }, 'properties.roles', 'properties.roles: name at least one role.'],
    [{ roles: 'db' }, 'properties.roles', 'properties.roles: must be a list of role names, not "db".'],
    [{ roles: ['db', ' '] }, 'properties.roles[1]', 'properties.roles[1]: a role must be a non-empty string, not " ".'],
    [{ roles: ['db', 5] }, 'properties.roles[1]', 'properties.roles[1]: a role must be a non-empty string, not 5.'],
    [{ roles: [null] }, 'properties.roles[0]', "properties.roles[0]: The value 'None' is not a valid string."],
    [{ roles: ['db', 'db '] }, 'properties.roles[1]', "properties.roles[1]: the role 'db' is listed more than once."],
    [{ roles: ['db,cache'] }, 'properties.roles[0]', "properties.roles[0]: 'db,cache' contains a comma, which separates roles in metadata; list each role on its own."],
    [{ roles: ['db'], ratio: 0 }, 'properties.ratio', 'properties.ratio: must be an integer from 1 to 100, not 0.'],
    [{ roles: ['db'], ratio: 1.5 }, 'properties.ratio', 'properties.ratio: must be an integer from 1 to 100, not 1.5.'],
    [{ roles: ['db'], ratio: 101 }, 'properties.ratio', 'properties.ratio: must be an integer from 1 to 100, not 101.'],
    [{ roles: ['db'], ratio: 'two' }, 'properties.ratio', "properties.ratio: The value 'two' is not a valid Integer"],
    [
      { roles: ['db'], policy: 'affinity' },
      'properties.policy',
      "properties.policy: 'affinity' must be one of the allowed values: anti-affinity, soft-anti-affinity",
    ],
  ])('refuses %j at %s', (properties, at, message) => {
    expect(() => validatePolicySpec(spec(properties), { registry, cloud: null })).toThrow(expect.objectContaining({ status: 400, path: at, message }));
  });

  it('accepts soft-anti-affinity and an integer string ratio', () => {
    const { policy } = validatePolicySpec(spec({ roles: ['db', 'cache'], ratio: '3', policy: 'soft-anti-affinity' }), { registry, cloud: null });
    expect(policy.properties).toEqual({ roles: ['db', 'cache'], ratio: 3, policy: 'soft-anti-affinity' });
  });
});

describe('role anti-affinity attach', () => {
  it('creates <cluster>-aa-<i> for i = 1..ratio and records their ids', () => {
    const out = attach({ roles: ['db'], ratio: 2 });
    expect(out).toMatchObject({ ok: true, status: 'OK' });
    expect(out.cloud_changes).toEqual([
      { op: 'create_server_group', id: 'new-server_group-1', name: 'web-aa-1', policy: 'anti-affinity', rules: null },
      { op: 'create_server_group', id: 'new-server_group-2', name: 'web-aa-2', policy: 'anti-affinity', rules: null },
    ]);
    expect(out.binding_data).toEqual({
      RoleAntiAffinityPolicy: {
        version: '1.0',
        data: {
          policy: 'anti-affinity',
          groups: [
            { id: 'new-server_group-1', name: 'web-aa-1', created: true },
            { id: 'new-server_group-2', name: 'web-aa-2', created: true },
          ],
        },
      },
    });
  });

  it('reuses a same-named group with the same policy and creates only the missing one', () => {
    const out = attach(
      { roles: ['db'], ratio: 2, policy: 'soft-anti-affinity' },
      { cloud: { server_groups: [{ id: 'g-old', name: 'web-aa-1', policies: ['soft-anti-affinity'], members: ['s1'] }] } },
    );
    expect(out.ok).toBe(true);
    expect(out.cloud_changes).toEqual([{ op: 'create_server_group', id: 'new-server_group-1', name: 'web-aa-2', policy: 'soft-anti-affinity', rules: null }]);
    expect((out.binding_data as { RoleAntiAffinityPolicy: { data: { groups: unknown[] } } }).RoleAntiAffinityPolicy.data.groups).toEqual([
      { id: 'g-old', name: 'web-aa-1', created: false },
      { id: 'new-server_group-1', name: 'web-aa-2', created: true },
    ]);
  });

  it('reuses the group the same way when the snapshot lists the groups without their members', () => {
    const group = { id: 'g-old', name: 'web-aa-1', policies: ['soft-anti-affinity'] };
    const properties = { roles: ['db'], ratio: 2, policy: 'soft-anti-affinity' };
    const without = attach(properties, { cloud: { server_groups: [group] } });
    expect(without).toStrictEqual(attach(properties, { cloud: { server_groups: [{ ...group, members: ['s1', 's2'] }] } }));
    expect(without.ok).toBe(true);
  });

  it.each([
    [
      'a same-named group with another policy',
      { cloud: { server_groups: [{ id: 'g-old', name: 'web-aa-1', policy: 'affinity' }] } },
      "The server group 'web-aa-1' exists with the policy 'affinity', not 'anti-affinity'; delete or rename it first.",
    ],
    [
      'beside an affinity policy',
      { attached: [{ id: 'p-aff', name: 'aff', type: 'senlin.policy.affinity-1.0' }] },
      "The role anti-affinity policy cannot be attached beside the affinity policy 'aff': Nova allows one server group per server, and both policies would choose the server group of new nodes.",
    ],
    [
      'on a profile type without server groups',
      { cluster: { id: 'c1', name: 'web', profile: { type: 'os.heat.stack-1.0', spec: {} } } },
      'Policy not applicable on profile type: os.heat.stack-1.0',
    ],
    [
      'when the snapshot lacks the server groups',
      { cloud: {} },
      "Failed in retrieving servergroup 'web-aa-1': The snapshot has no cloud.server_groups, which the policy needs.",
    ],
  ])('refuses %s, changing nothing', (_case, extra, message) => {
    const out = attach({ roles: ['db'], ratio: 2 }, extra as Partial<EvaluationInput>);
    expect(out).toMatchObject({ ok: false, status: 'ERROR', message, cloud_changes: [] });
    expect(out.binding_data).toBeUndefined();
  });

  it('attaches beside zone placement', () => {
    const out = attach({ roles: ['db'] }, { attached: [{ id: 'p-zp', type: 'senlin.policy.zone_placement-1.0' }] });
    expect(out.ok).toBe(true);
  });

  it('re-checks a spec that never went through validate instead of creating zero groups', () => {
    expect(attach({ roles: ['db'], ratio: 0 })).toMatchObject({ ok: false, message: 'properties.ratio: must be an integer from 1 to 100, not 0.', cloud_changes: [] });
  });
});

describe('role anti-affinity detach', () => {
  const detach = (binding: Record<string, unknown> | null) =>
    evaluate({ hook: 'detach', policies: [raa({ roles: ['db'] }, binding)], cluster: { id: 'c1', name: 'web', profile: profile() }, cloud: { server_groups: [] } }, { registry });

  it('deletes the groups it created and keeps the ones it reused', () => {
    const out = detach(bindingData([{ id: 'g1' }, { id: 'g-old', created: false }, { id: 'g3' }]));
    expect(out).toMatchObject({ ok: true, message: 'Deleted 2 server group(s) (web-aa-1, web-aa-3); kept 1 that existed before attach.' });
    expect(out.cloud_changes).toEqual([
      { op: 'delete_server_group', id: 'g1' },
      { op: 'delete_server_group', id: 'g3' },
    ]);
  });

  it('succeeds without deleting anything when no group was recorded', () => {
    expect(detach(null)).toMatchObject({ ok: true, message: 'No server group recorded; nothing deleted.', cloud_changes: [] });
  });
});

describe('role anti-affinity pre_op', () => {
  type Case = {
    name: string;
    properties?: Record<string, unknown>;
    /** the profile's metadata; default `{roles: 'db'}`, null: none */
    metadata?: Record<string, unknown> | null;
    nodes: Array<Record<string, unknown>>;
    action: EvaluationInput['action'];
    groups?: string[];
    expected: Array<string | null>;
  };
  const cases: Case[] = [
    {
      name: 'ratio 2 continues the round robin from the existing members',
      properties: { roles: ['db'], ratio: 2 },
      nodes: [inGroup('n1', 'g1'), inGroup('n2', 'g2'), inGroup('n3', 'g1'), inGroup('n4', null)],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 3 } },
      expected: ['g2', 'g1', 'g2'],
    },
    {
      name: 'ratio 2 refills the group a scale-in emptied before alternating again',
      properties: { roles: ['db'], ratio: 2 },
      nodes: [inGroup('n1', 'g1'), inGroup('n2', 'g1'), inGroup('n3', 'g1')],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 4 } },
      expected: ['g2', 'g2', 'g2', 'g1'],
    },
    {
      name: 'ratio 1 puts every role node in the one group',
      nodes: [],
      groups: ['g1'],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } },
      expected: ['g1', 'g1'],
    },
    {
      name: 'a role among several in the profile, with spaces',
      metadata: { roles: ' web , db' },
      nodes: [],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } },
      expected: ['g1', 'g2'],
    },
    {
      name: 'a profile bearing none of the roles leaves new nodes without a group',
      metadata: { roles: 'web,cache' },
      nodes: [inGroup('n1', 'g1')],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } },
      expected: [null, null],
    },
    {
      name: 'a profile without metadata leaves new nodes without a group',
      metadata: null,
      nodes: [],
      action: { action: 'CLUSTER_SCALE_OUT' },
      expected: [null],
    },
    {
      name: "a node whose own metadata removes the profile's role",
      nodes: [inGroup('n1', 'g1'), { id: 'new', status: 'INIT', data: {}, metadata: { roles: '' } }],
      action: { action: 'NODE_CREATE', target: 'new' },
      expected: [null],
    },
    {
      name: 'a node whose own metadata adds a role the profile lacks (and is not counted as a member)',
      metadata: { roles: 'web' },
      nodes: [inGroup('n1', 'g1'), { id: 'new', status: 'INIT', data: { placement: { servergroup: 'g2' } }, metadata: { roles: 'web,db' } }],
      action: { action: 'NODE_CREATE', target: 'new' },
      expected: ['g2'],
    },
    {
      name: 'an existing member counts in its group even after its metadata dropped the role',
      nodes: [inGroup('n1', 'g1', { metadata: { roles: '' } })],
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } },
      expected: ['g2'],
    },
    {
      name: 'a growing resize places the new nodes',
      nodes: [inGroup('n1', 'g1'), inGroup('n2', 'g2')],
      action: { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 5 } },
      expected: ['g1', 'g2', 'g1'],
    },
    {
      name: 'a shrinking resize places nothing',
      nodes: [inGroup('n1', 'g1'), inGroup('n2', 'g2')],
      action: { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'CHANGE_IN_CAPACITY', number: -1 } },
      expected: [],
    },
  ];

  it.each(cases)('$name', ({ properties, metadata, nodes, action, groups, expected }) => {
    const props = properties ?? { roles: ['db'], ratio: 2 };
    const ids = groups ?? ['g1', 'g2'];
    const out = preOp({
      policies: [raa(props, bindingData(ids.map((id) => ({ id }))))],
      cluster: { id: 'c1', name: 'web', profile: profile(metadata === undefined ? { roles: 'db' } : (metadata ?? undefined)), nodes: nodes as never },
      action,
    });
    expect(out.status).toBe('OK');
    expect(out.trace[0]).toMatchObject({ policy_type: `${TYPE}-1.0`, verdict: 'OK' });
    expect(out.plan?.error).toBeNull();
    expect(out.plan?.create.map((c) => c.placement.servergroup ?? null)).toEqual(expected);
  });

  it('merges its groups with zone placement into the plan, whichever of the two runs first', () => {
    const zp = { id: 'p-zp', name: 'zp', binding_id: 'b-zp', spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }, { name: 'az2' }] } } };
    const nodes = [
      { id: 'n1', status: 'ACTIVE', data: { placement: { zone: 'az1', servergroup: 'g1' } } },
      { id: 'n2', status: 'ACTIVE', data: { placement: { zone: 'az1', servergroup: 'g2' } } },
      { id: 'n3', status: 'ACTIVE', data: { placement: { zone: 'az2', servergroup: 'g1' } } },
    ];
    // The engine lays creation.zones out in the plan's order (az1 once, then az2 twice).
    const expected = [
      { index: 0, placement: { zone: 'az1', servergroup: 'g2' } },
      { index: 1, placement: { zone: 'az2', servergroup: 'g1' } },
      { index: 2, placement: { zone: 'az2', servergroup: 'g2' } },
    ];
    for (const [first, second] of [
      ['2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'],
      ['2024-01-02T00:00:00Z', '2024-01-01T00:00:00Z'],
    ]) {
      const out = preOp({
        policies: [
          { ...zp, attached_at: first },
          raa({ roles: ['db'], ratio: 2 }, bindingData([{ id: 'g1' }, { id: 'g2' }]), { attached_at: second }),
        ],
        cluster: { id: 'c1', name: 'web', profile: profile({ roles: 'db' }), nodes },
        action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 3 } },
      });
      expect(out.status).toBe('OK');
      expect(out.data.creation).toEqual({ count: 3, zones: { az1: 1, az2: 2 } });
      expect(out.plan?.create).toEqual(expected);
      expect(out.data.placement).toEqual({ count: 3, placements: expected.map((e) => e.placement) });
    }
  });

  it('gives NODE_CREATE its group and the zone in the plan', () => {
    const out = preOp({
      policies: [
        { id: 'p-zp', name: 'zp', binding_id: 'b-zp', spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az2' }] } } },
        raa({ roles: ['db'] }, bindingData([{ id: 'g1' }])),
      ],
      cluster: { id: 'c1', name: 'web', profile: profile({ roles: 'db' }), nodes: [{ id: 'new', status: 'INIT', data: {} }] },
      action: { action: 'NODE_CREATE', target: 'new' },
    });
    expect(out.plan?.create).toEqual([{ index: 0, placement: { zone: 'az2', servergroup: 'g1' } }]);
  });

  it.each([
    [
      'no binding data',
      null,
      { roles: 'db' },
      "Failed policy 'raa': binding_data.RoleAntiAffinityPolicy is missing: the policy has no server groups recorded for this cluster; detach and attach it again.",
    ],
    [
      'profile roles that are not a string',
      bindingData([{ id: 'g1' }]),
      { roles: ['db'] },
      'Failed policy \'raa\': cluster.profile.spec.properties.metadata.roles: must be a comma-separated string of role names, not ["db"].',
    ],
  ])('fails the action on %s', (_case, binding, metadata, reason) => {
    const out = preOp({
      policies: [raa({ roles: ['db'] }, binding)],
      cluster: { id: 'c1', name: 'web', profile: profile(metadata), nodes: [] },
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } },
    });
    expect(out).toMatchObject({ status: 'ERROR', reason });
    expect(out.plan).toMatchObject({ error: `Policy check failure: ${reason}`, create: [] });
  });

  it('is not checked for a scale-in', () => {
    const out = preOp({
      policies: [raa({ roles: ['db'] }, bindingData([{ id: 'g1' }]))],
      cluster: { id: 'c1', name: 'web', profile: profile({ roles: 'db' }), nodes: [inGroup('n1', 'g1')] },
      action: { action: 'CLUSTER_SCALE_IN', inputs: { count: 1 } },
    });
    expect(out.trace[0]).toMatchObject({ verdict: 'SKIPPED', reason: 'not checked BEFORE CLUSTER_SCALE_IN' });
    expect(out.data.placement).toBeUndefined();
  });
});
