import { AFFINITY_POLICY_TYPE, BUILTIN_POLICY_TYPE_NAMES, MEMBER_FREE_POLICY_TYPES } from './builtins';
import { evaluate, type EvaluationInput } from './evaluate';
import { CHAIN_ACTIONS, builtInChain, builtInSpec, chainNodes } from './testing/built-in-chain';
import { InMemoryCloud, type ServerGroupFact } from './framework/cloud';
import { Policy, PolicyType, type AttachContext, type AttachResult, type HookContext } from './framework/policy';
import { PolicyRegistry } from './framework/registry';

/**
 * The loader lists a project's server groups without their members (about 40 bytes per member, read
 * and stored in every decision of the project's clusters) unless a bound policy's type may read them
 * (`readsGroupMembers`). This holds the built-in types to that: every hook decides the same with and
 * without the members, for every action they take part in; and a hook that does read them without
 * saying so fails its decision with the reason rather than see a group with no members.
 */
describe('readsGroupMembers: the built-in types decide the same without the members', () => {
  const spec = builtInSpec;
  const groups: ServerGroupFact[] = [
    { id: 'g1', name: 'web-group', policy: 'anti-affinity', rules: {}, members: ['s0', 's2', 's4'] },
    { id: 'g2', name: 'db-group', policies: ['affinity'], rules: null, members: ['s1'] },
    { id: 'g3', name: 'empty', policy: 'soft-anti-affinity', members: [] },
  ];
  const withoutMembers = groups.map(({ members: _, ...g }) => g);
  const chain = builtInChain;
  // each node recorded in a group, as the affinity policy places them
  const nodes = chainNodes((i) => ({ servergroup: i % 2 ? 'g2' : 'g1' }));
  const profile = (hints: Record<string, unknown> = {}) => ({
    type: 'os.nova.server-1.0',
    spec: { type: 'os.nova.server', version: '1.0', properties: Object.keys(hints).length ? { scheduler_hints: hints } : {} },
  });
  const cloud = (serverGroups: unknown[]) => ({
    availability_zones: ['az1', 'az2'],
    hypervisors: [{ id: 1, hypervisor_hostname: 'h1', service: { host: 'h1' } }],
    server_groups: serverGroups as ServerGroupFact[],
  });
  const input = (
    action: string,
    inputs: Record<string, unknown>,
    hook: EvaluationInput['hook'],
    serverGroups: unknown[],
    policies: EvaluationInput['policies'],
    hints: Record<string, unknown> = {},
  ): EvaluationInput => ({
    hook,
    policies,
    cluster: { id: 'c1', name: 'web', min_size: 0, max_size: 20, desired_capacity: 6, profile: profile(hints), nodes },
    cloud: cloud(serverGroups),
    action: { action, inputs },
    now: '2026-12-06T12:00:00.000Z',
    seed: 7,
  });
  const actions = CHAIN_ACTIONS;
  const both = (make: (serverGroups: unknown[]) => EvaluationInput) => {
    const whole = evaluate(make(structuredClone(groups)));
    const part = evaluate(make(structuredClone(withoutMembers)));
    expect(part).toStrictEqual(whole);
    return whole;
  };

  it('lists every built-in type', () => {
    expect([...MEMBER_FREE_POLICY_TYPES]).toEqual([...BUILTIN_POLICY_TYPE_NAMES]);
    expect(PolicyRegistry.withBuiltins().memberFreeTypes()).toEqual([...BUILTIN_POLICY_TYPE_NAMES]);
  });

  it.each(
    actions.flatMap(([a, i]) => (['pre_op', 'post_op'] as const).flatMap((h) => [[a, i, h, {}] as const, [a, i, h, { enable_drs_extension: true }] as const])),
  )('%s %j, %s (affinity %j): the same decision', (action, inputs, hook, affinity) => {
    const out = both((g) => input(action, inputs, hook, g, chain(affinity)));
    expect(out.reason).not.toMatch(/members/);
  });

  it('runs the hooks it says it does (the test above is not vacuous)', () => {
    const ran = (action: string) => evaluate(input(action, {}, 'pre_op', withoutMembers, chain({}))).trace.filter((t) => t.ran).map((t) => t.policy_name);
    expect(ran('CLUSTER_SCALE_OUT')).toEqual(expect.arrayContaining(['out', 'zones', 'aff']));
    expect(ran('CLUSTER_SCALE_IN')).toEqual(expect.arrayContaining(['in', 'zones', 'del']));
  });

  const affinity = (servergroup: Record<string, unknown>) => [{ id: 'p-aff', name: 'aff', spec: spec(AFFINITY_POLICY_TYPE, { servergroup }) }];
  it.each([
    ['finds the group the profile names, by id', { policies: 'anti-affinity' }, { group: 'g1' }],
    ['finds the group the profile names, by name, with another policy (refused)', { policies: 'affinity' }, { group: 'web-group' }],
    ['finds a group of its name (Nova before 2.64)', { name: 'db-group', policies: 'affinity' }, {}],
    ['creates a group', { policies: 'anti-affinity' }, {}],
    ['misses the group the profile names', { policies: 'anti-affinity' }, { group: 'gone' }],
  ])('attach %s: the same outcome', (_label, servergroup, hints) => {
    const out = both((g) => input('CLUSTER_ATTACH_POLICY', {}, 'attach', g, affinity(servergroup), hints));
    expect(out.reason).not.toMatch(/members/);
  });

  it('detach: the same outcome', () => {
    const bound = [{ ...affinity({ policies: 'anti-affinity' })[0], binding_data: { AffinityPolicy: { version: '1.0', data: { servergroup_id: 'g3', inherited_group: false } } } }];
    const out = both((g) => input('CLUSTER_DETACH_POLICY', {}, 'detach', g, bound));
    expect(out.cloud_changes).toEqual([{ op: 'delete_server_group', id: 'g3' }]);
  });

  describe('a hook that reads the members its snapshot left out', () => {
    @PolicyType({
      name: 'test.policy.member_counter',
      versions: { '1.0': [{ status: 'SUPPORTED', since: '2026.12' }] },
      profileTypes: ['ANY'],
      targets: [],
      priority: 500,
      hooks: ['attach', 'pre_op'],
      properties: {},
    })
    class MemberCounter extends Policy {
      override attach(ctx: AttachContext): AttachResult {
        const group = ctx.cloud.findServerGroup('g1')!;
        return { ok: true, data: { counted: group.members!.length, copy: JSON.parse(JSON.stringify(group)) } };
      }
      override preOp(ctx: HookContext): string | void {
        const group = ctx.cloud.findServerGroup('web-group')!;
        ctx.action.data.members = group.members!.length;
      }
    }
    const registry = PolicyRegistry.withBuiltins().register(MemberCounter);
    const counter = [{ id: 'p-count', name: 'count', spec: { type: 'test.policy.member_counter', version: '1.0', properties: {} } }];

    it('fails the decision with the reason (pre_op)', () => {
      const whole = evaluate(input('CLUSTER_SCALE_OUT', {}, 'pre_op', groups, counter), { registry });
      expect(whole.status).toBe('OK');
      expect(whole.data.members).toBe(3);
      const part = evaluate(input('CLUSTER_SCALE_OUT', {}, 'pre_op', withoutMembers, counter), { registry });
      expect(part.status).toBe('ERROR');
      expect(part.reason).toBe("Failed policy 'count': The snapshot has no cloud.server_groups[].members, which the policy needs.");
    });

    it('refuses the attach with the reason; a group with its members is read as it is', () => {
      const whole = evaluate(input('CLUSTER_ATTACH_POLICY', {}, 'attach', groups, counter), { registry });
      expect(whole.binding_data).toEqual({ counted: 3, copy: groups[0] });
      const part = evaluate(input('CLUSTER_ATTACH_POLICY', {}, 'attach', withoutMembers, counter), { registry });
      expect(part.ok).toBe(false);
      expect(part.message).toBe('The snapshot has no cloud.server_groups[].members, which the policy needs.');
    });

    it('copies and JSON of such a group leave the members out, as the snapshot did', () => {
      const cloud = new InMemoryCloud({ server_groups: structuredClone(withoutMembers) }, () => 'new');
      const group = cloud.findServerGroup('g1')!;
      expect(JSON.parse(JSON.stringify(group))).toStrictEqual(withoutMembers[0]);
      expect({ ...group }).toStrictEqual(withoutMembers[0]);
      expect(structuredClone(group)).toStrictEqual(withoutMembers[0]);
      expect(() => group.members).toThrow('The snapshot has no cloud.server_groups[].members, which the policy needs.');
      // groups that have them are the snapshot's own objects
      const listed = structuredClone(groups);
      expect(new InMemoryCloud({ server_groups: listed }, () => 'new').findServerGroup('g2')).toBe(listed[1]);
    });

    it('registers the type as reading them', () => {
      expect(registry.memberFreeTypes()).toEqual([...BUILTIN_POLICY_TYPE_NAMES]);
    });
  });
});
