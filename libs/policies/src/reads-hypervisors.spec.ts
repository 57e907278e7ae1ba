import { AFFINITY_POLICY_TYPE, HYPERVISOR_FREE_POLICY_TYPES, readsHypervisors } from './builtins';
import { evaluate, type EvaluationInput } from './evaluate';
import { CHAIN_ACTIONS, builtInChain, builtInSpec, chainNodes } from './testing/built-in-chain';

/**
 * The loader leaves the hypervisors (1.6 MB at 10,000 of them) out of a decision's snapshot unless
 * a bound policy may read them (readsHypervisors). This holds the built-in types to that: every hook
 * of a chain of the types said not to read them decides on a cloud without hypervisors, for every
 * action they take part in, and the one that does read them says so by failing without them.
 */
describe('readsHypervisors: the built-in types it leaves out decide without the hypervisors', () => {
  const spec = builtInSpec;
  const chain = builtInChain;
  const nodes = chainNodes();
  const input = (action: string, inputs: Record<string, unknown>, affinity: Record<string, unknown>, hook: 'pre_op' | 'post_op' = 'pre_op'): EvaluationInput => ({
    hook,
    policies: chain(affinity),
    cluster: { id: 'c1', min_size: 0, max_size: 20, desired_capacity: 6, profile: { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: {} } }, nodes },
    // no hypervisors: a hook that asks for them fails with CloudFactMissingError
    cloud: { availability_zones: ['az1', 'az2'], server_groups: [{ id: 'g1', name: 'g', policy: 'anti-affinity', rules: {}, members: [] }] },
    action: { action, inputs },
    now: '2026-12-06T12:00:00.000Z',
    seed: 7,
  });
  const actions = CHAIN_ACTIONS;

  it('lists the built-in types but affinity, and affinity only with enable_drs_extension', () => {
    expect([...HYPERVISOR_FREE_POLICY_TYPES].sort()).toEqual(['senlin.policy.deletion', 'senlin.policy.scaling', 'senlin.policy.zone_placement']);
    for (const p of chain({})) expect(readsHypervisors({ type: `${p.spec.type}-${p.spec.version}`, spec: p.spec })).toBe(false);
    expect(readsHypervisors({ type: `${AFFINITY_POLICY_TYPE}-1.0`, spec: spec(AFFINITY_POLICY_TYPE, { enable_drs_extension: true }) })).toBe(true);
  });

  it.each(actions.flatMap(([a, i]) => (['pre_op', 'post_op'] as const).map((h) => [a, i, h] as const)))(
    '%s %j, %s: decided without the hypervisors',
    (action, inputs, hook) => {
      const out = evaluate(input(action, inputs, {}, hook));
      expect(out.reason).not.toMatch(/hypervisors/);
      expect(out.status).toBe('OK');
    },
  );

  it('runs the hooks it says it does (the test above is not vacuous)', () => {
    const ran = (action: string) => evaluate(input(action, {}, {})).trace.filter((t) => t.ran).map((t) => t.policy_name);
    expect(ran('CLUSTER_SCALE_OUT')).toEqual(expect.arrayContaining(['out', 'zones', 'aff']));
    expect(ran('CLUSTER_SCALE_IN')).toEqual(expect.arrayContaining(['in', 'zones', 'del']));
  });

  it('the affinity policy with the DRS extension does read them', () => {
    const out = evaluate(input('CLUSTER_SCALE_OUT', {}, { enable_drs_extension: true }));
    expect(out.status).toBe('ERROR');
    expect(out.reason).toBe("Failed policy 'aff': The snapshot has no cloud.hypervisors, which the policy needs.");
  });
});
