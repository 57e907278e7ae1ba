import { validatePolicySpec } from '../api';
import { EvaluationInput } from '../evaluate';
import { evaluateAtTestTime as evaluate } from '../testing/fixed-time';
import { chooseServerGroup, pickDrsHypervisor } from './plan';

const affinity = (properties: Record<string, unknown>) => ({ type: 'senlin.policy.affinity', version: '1.0', properties });
const profile = (properties: Record<string, unknown> = {}) => ({
  type: 'os.nova.server-1.0',
  spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.small', ...properties } },
});
const binding = (id: string, inherited = false) => ({ AffinityPolicy: { version: '1.0', data: { inherited_group: inherited, servergroup_id: id } } });
const groups = [
  { id: 'g-anti', name: 'web-anti', policy: 'anti-affinity', rules: {}, members: [] },
  { id: 'g-aff-old', name: 'old-nova', policies: ['affinity'], members: [] },
];

function attach(properties: Record<string, unknown>, profileProps: Record<string, unknown> = {}, extra: Partial<EvaluationInput> = {}) {
  return evaluate(
    {
      hook: 'attach',
      seed: 42,
      policies: [{ id: 'p-aff', name: 'aff', spec: affinity(properties) }],
      cluster: { id: 'c1', profile: profile(profileProps) },
      cloud: { server_groups: groups, availability_zones: ['az1'] },
      ...extra,
    },
    { newId: (kind) => `new-${kind}` },
  );
}

describe('affinity validate (§4.1, decisions 5, 19)', () => {
  it('defaults servergroup.policies to affinity', () => {
    const { policy } = validatePolicySpec(affinity({ servergroup: {} }), { cloud: null });
    expect(policy.properties).toEqual({
      servergroup: { name: null, policies: 'affinity', rules: null },
      availability_zone: null,
      enable_drs_extension: false,
    });
  });

  it('accepts the soft policies and refuses others with the path', () => {
    expect(() => validatePolicySpec(affinity({ servergroup: { policies: 'soft-anti-affinity' } }), { cloud: null })).not.toThrow();
    expect(() => validatePolicySpec(affinity({ servergroup: { policies: 'spread' } }), { cloud: null })).toThrow(
      expect.objectContaining({
        status: 400,
        path: 'properties.servergroup.policies',
        message: "properties.servergroup.policies: 'spread' must be one of the allowed values: affinity, soft-affinity, anti-affinity, soft-anti-affinity",
      }),
    );
  });

  it('accepts max_server_per_host only with anti-affinity', () => {
    expect(() =>
      validatePolicySpec(affinity({ servergroup: { policies: 'anti-affinity', rules: { max_server_per_host: 2 } } }), { cloud: null }),
    ).not.toThrow();
    expect(() => validatePolicySpec(affinity({ servergroup: { rules: { max_server_per_host: 2 } } }), { cloud: null })).toThrow(
      expect.objectContaining({ status: 400, path: 'properties.servergroup.rules' }),
    );
    expect(() =>
      validatePolicySpec(affinity({ servergroup: { policies: 'anti-affinity', rules: { max_server_per_host: 0 } } }), { cloud: null }),
    ).toThrow(expect.objectContaining({ status: 400, path: 'properties.servergroup.rules.max_server_per_host' }));
  });

  it('checks availability_zone against Nova at create time only', () => {
    const spec = affinity({ availability_zone: 'az9' });
    expect(() => validatePolicySpec(spec, { cloud: null })).not.toThrow();
    expect(() => validatePolicySpec(spec, { cloud: { availability_zones: ['az1'] } })).toThrow(
      expect.objectContaining({ status: 400, message: "The specified availability_zone 'az9' could not be found." }),
    );
  });
});

describe('affinity attach (§4.2, decisions 6-8)', () => {
  it('creates a group named server_group_<8> with the default policy when no name is given', () => {
    const out = attach({});
    expect(out.ok).toBe(true);
    expect(out.binding_data).toEqual(binding('new-server_group'));
    expect(out.cloud_changes).toHaveLength(1);
    const change = out.cloud_changes?.[0] as { op: string; id: string; name: string; policy: string; rules: unknown };
    expect(change).toMatchObject({ op: 'create_server_group', id: 'new-server_group', policy: 'affinity', rules: null });
    expect(change.name).toMatch(/^server_group_[A-Za-z][A-Za-z0-9]{7}$/);
  });

  it('creates a missing named group with its rules', () => {
    const out = attach({ servergroup: { name: 'db', policies: 'anti-affinity', rules: { max_server_per_host: 2 } } });
    expect(out.cloud_changes).toEqual([
      { op: 'create_server_group', id: 'new-server_group', name: 'db', policy: 'anti-affinity', rules: { max_server_per_host: 2 } },
    ]);
  });

  it('inherits an existing named group whose policy matches, by name or id', () => {
    expect(attach({ servergroup: { name: 'web-anti', policies: 'anti-affinity' } })).toMatchObject({
      ok: true,
      binding_data: binding('g-anti', true),
      cloud_changes: [],
    });
    expect(attach({ servergroup: { name: 'g-aff-old' } }).binding_data).toEqual(binding('g-aff-old', true));
  });

  it("refuses an existing group with another policy (Senlin's message)", () => {
    expect(attach({ servergroup: { name: 'web-anti' } }).message).toBe(
      "Policies specified (affinity) doesn't match that of the existing servergroup (anti-affinity).",
    );
  });

  it('prefers the profile group from properties.scheduler_hints.group over servergroup.name', () => {
    const out = attach({ servergroup: { name: 'other', policies: 'anti-affinity' } }, { scheduler_hints: { group: 'web-anti' } });
    expect(out).toMatchObject({ ok: true, binding_data: binding('g-anti', true), cloud_changes: [] });
  });

  it('fails when the profile group is unknown or its policy differs', () => {
    expect(attach({}, { scheduler_hints: { group: 'nope' } }).message).toBe(
      "The server group 'nope' named in the profile's scheduler_hints.group could not be found.",
    );
    expect(attach({}, { scheduler_hints: { group: 'web-anti' } }).message).toBe(
      "Policies specified (affinity) doesn't match that of the existing servergroup (anti-affinity).",
    );
  });

  it('reports a lookup failure when the snapshot lacks the server groups', () => {
    const out = attach({ servergroup: { name: 'db' } }, {}, { cloud: {} });
    expect(out.message).toBe("Failed in retrieving servergroup 'db'.");
  });

  it('refuses to join a zone placement policy when it chooses zones itself (decision 3)', () => {
    const zp = { id: 'zp-id', name: 'zp', spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }] } } };
    expect(attach({ availability_zone: 'az1' }, {}, { attached: [zp] }).message).toBe(
      "The affinity policy sets availability_zone or enable_drs_extension and conflicts with the attached zone placement policy 'zp': both would choose the availability zone of new nodes.",
    );
    expect(attach({ enable_drs_extension: true }, {}, { attached: [zp] }).ok).toBe(false);
    expect(attach({}, {}, { attached: [zp] }).ok).toBe(true);
  });

  it('is a singleton', () => {
    const out = attach({}, {}, { attached: [{ id: 'p-other', spec: affinity({}) }] });
    expect(out.message).toBe(
      'Only one instance of policy type (senlin.policy.affinity-1.0) can be attached to a cluster, but another instance (p-other) is found attached to the cluster (c1) already.',
    );
    expect(out.cloud_changes).toEqual([]);
  });
});

describe('affinity detach (§4.3)', () => {
  const detach = (binding_data: Record<string, unknown> | null) =>
    evaluate({ hook: 'detach', policies: [{ id: 'p-aff', name: 'aff', spec: affinity({}), binding_data }], cluster: { id: 'c1' }, cloud: {} });

  it('deletes the group it created', () => {
    expect(detach(binding('g1'))).toMatchObject({
      ok: true,
      message: 'Servergroup resource deletion succeeded.',
      cloud_changes: [{ op: 'delete_server_group', id: 'g1' }],
    });
  });

  it.each([
    ['an inherited group', binding('g1', true)],
    ['no binding data', null],
    ['binding data of another version', { AffinityPolicy: { version: '2.0', data: { servergroup_id: 'g1' } } }],
  ])('keeps %s', (_name, data) => {
    expect(detach(data)).toMatchObject({ ok: true, message: 'Servergroup resource deletion succeeded.', cloud_changes: [] });
  });
});

describe('affinity pre_op (§4.4, decisions 9, 10)', () => {
  const hypervisors = [
    { id: 1, hypervisor_hostname: 'hydra01', service: { host: 'hydra' } },
    { id: 2, hypervisor_hostname: 'fake-DRS-cluster-4', service: { host: 'vc-host-4' } },
  ];
  const pre = (properties: Record<string, unknown>, action: EvaluationInput['action'], nodes = 0) =>
    evaluate({
      policies: [{ id: 'p-aff', name: 'aff', spec: affinity(properties), binding_data: binding('SG') }],
      cluster: { id: 'c1', max_size: 10, profile: profile(), nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}` })) },
      cloud: { hypervisors },
      action,
    });

  it('places every new node in the group and zone', () => {
    expect(pre({ availability_zone: 'az1' }, { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } }).data.placement).toEqual({
      count: 2,
      placements: [
        { servergroup: 'SG', zone: 'az1' },
        { servergroup: 'SG', zone: 'az1' },
      ],
    });
  });

  it('uses creation.count when an earlier policy set it, default 1', () => {
    const out = pre({}, { action: 'CLUSTER_SCALE_OUT', inputs: { count: 5 }, data: { creation: {} } });
    expect((out.data.placement as { count: number }).count).toBe(1);
  });

  it('picks the first hypervisor containing "drs" and its service host', () => {
    expect(pickDrsHypervisor(hypervisors)?.id).toBe(2);
    const out = pre({ enable_drs_extension: true }, { action: 'NODE_CREATE' });
    expect(out.data.placement).toEqual({ count: 1, placements: [{ servergroup: 'SG', zone: 'nova:vc-host-4' }] });
  });

  it('keeps the DRS failure text in the final reason', () => {
    const out = evaluate({
      policies: [{ name: 'aff', spec: affinity({ enable_drs_extension: true }), binding_data: binding('SG') }],
      cluster: { profile: profile() },
      cloud: { hypervisors: [hypervisors[0]] },
      action: { action: 'CLUSTER_SCALE_OUT' },
    });
    expect(out.reason).toBe("Failed policy 'aff': No suitable vSphere host is available.");
    expect(out.data.status_reason).toBe('No suitable vSphere host is available.');
  });

  it('fails an invalid resize with the parser message', () => {
    const out = pre({}, { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 11, strict: true } });
    expect(out.reason).toBe("Failed policy 'aff': The target capacity (11) is greater than the cluster's max_size (10).");
  });

  it('places nothing for a shrinking resize', () => {
    const out = pre({}, { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 1 } }, 3);
    expect(out.data.placement).toBeUndefined();
    expect(out.data.deletion).toEqual({ count: 2 });
  });

  it('fails with a clear reason when the binding data is missing (Senlin crashed)', () => {
    const out = evaluate({ policies: [{ name: 'aff', spec: affinity({}) }], cluster: { profile: profile() }, action: { action: 'CLUSTER_SCALE_OUT' } });
    expect(out.reason).toBe("Failed policy 'aff': The affinity policy has no server group recorded for this cluster; detach and attach it again.");
  });
});

describe('chooseServerGroup', () => {
  it('reads the profile hint from properties, not the top level', () => {
    expect(chooseServerGroup({ scheduler_hints: { group: 'top' } }, null)).toEqual({ kind: 'create', name: null });
    expect(chooseServerGroup({ properties: { scheduler_hints: { group: 'g' } } }, 'n')).toEqual({ kind: 'inherit', nameOrId: 'g' });
    expect(chooseServerGroup({}, 'n')).toEqual({ kind: 'find-or-create', name: 'n' });
  });
});
