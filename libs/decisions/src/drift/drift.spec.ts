import { Policy, PolicyRegistry, PolicyType, Schema, type DriftContext, type PolicyDriftFinding } from '@trellis/policies';
import { aa, node, snapshot, zones } from '@trellis/testing/drift-snapshot';
import type { IdSource } from '../ids';
import type { SnapshotPolicy } from '../load-snapshot';
import { detectClusterDrift, driftTypesOf } from './detect-drift';
import { planRepair } from './plan-repair';
import { fingerprintOf } from './findings';

// Drift as the engine runs it over the policy framework's drift hook. The role anti-affinity
// plugin's findings and repairs are specified beside it (plugins/role-anti-affinity/src/cluster-drift.spec.ts).

function ids(): IdSource {
  let n = 0;
  return { uuid: () => `id-${++n}`, nodeName: () => `new-${n}` };
}

/** A type of this spec's own: it reports one finding over the nodes it is shown. */
@PolicyType({
  name: 'test.policy.drifting',
  versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2026.11' }] },
  profileTypes: ['ANY'],
  targets: [],
  priority: 500,
  hooks: ['drift'],
  properties: { limit: Schema.Integer({ description: 'a number' }) },
})
class DriftingPolicy extends Policy {
  override detectDrift(ctx: DriftContext): PolicyDriftFinding[] {
    return [{ kind: 'hosts_shared', host: 'h1', node_ids: ctx.nodes.map((n) => n.id), message: `${ctx.nodes.length} node(s) seen.` }];
  }
}

const drifting: SnapshotPolicy = {
  ...aa,
  id: 'p-d',
  name: 'drifting',
  type: 'test.policy.drifting-1.0',
  spec: { type: 'test.policy.drifting', version: '1.0', properties: { limit: 1 } },
  binding_id: 'b-d',
  binding_data: {},
};

const types = driftTypesOf(PolicyRegistry.withBuiltins());

describe('detectClusterDrift', () => {
  it('reports a zone distribution more than one node off its weights, not one node off', () => {
    const three = [node('a', 1, { zone: 'az1' }), node('b', 2, { zone: 'az1' }), node('c', 3, { zone: 'az1' }), node('d', 4, { zone: 'az2' })];
    expect(detectClusterDrift(snapshot(three.slice(0, 3).concat([node('e', 5, { zone: 'az2' }), node('f', 6, { zone: 'az2' })]), [zones], []), types)).toEqual([]);
    const off = detectClusterDrift(snapshot([...three, node('e', 5, { zone: 'az1' }), node('f', 6, { zone: 'az1' })], [zones], []), types);
    expect(off).toEqual([
      expect.objectContaining({ kind: 'zone_imbalance', detail: { expected: { az1: 3, az2: 3 }, actual: { az1: 5, az2: 1 } }, node_ids: ['a', 'b', 'c', 'e', 'f'] }),
    ]);
  });

  it('gives the same drift the same fingerprint whatever the node order', () => {
    const f = { kind: 'hosts_shared' as const, policy_id: 'p', group_id: 'g', host: 'h', node_ids: ['b', 'a'] };
    expect(fingerprintOf(f)).toBe(fingerprintOf({ ...f, node_ids: ['a', 'b'] }));
  });

  it('asks each enabled binding whose loaded type declares the drift hook, with the ACTIVE nodes, naming the policy', () => {
    const withPlugin = driftTypesOf(PolicyRegistry.withBuiltins().register(DriftingPolicy));
    const nodes = [node('n1', 1), node('n2', 2, { status: 'ERROR' }), node('n3', 3)];
    expect(detectClusterDrift(snapshot(nodes, [drifting, { ...drifting, binding_id: 'b-off', enabled: false }], []), withPlugin)).toEqual([
      { policy_id: 'p-d', policy_name: 'drifting', binding_id: 'b-d', kind: 'hosts_shared', host: 'h1', node_ids: ['n1', 'n3'], message: "Policy 'drifting': 2 node(s) seen." },
    ]);
    // the same binding in a process that did not load the type, and a type without the hook: not judged
    expect(detectClusterDrift(snapshot(nodes, [drifting, { ...zones, type: 'senlin.policy.affinity-1.0' }], []), types)).toEqual([]);
  });

  it('reports a drift-aware binding whose stored spec no longer resolves, instead of throwing', () => {
    const withPlugin = driftTypesOf(PolicyRegistry.withBuiltins().register(DriftingPolicy));
    const broken = { ...drifting, spec: { ...drifting.spec, properties: { limit: 'many' } } };
    const found = detectClusterDrift(snapshot([node('n1', 1)], [broken], []), withPlugin);
    expect(found).toEqual([expect.objectContaining({ kind: 'policy_unreadable', policy_id: 'p-d', node_ids: [] })]);
    expect(found[0]!.message).toMatch(/^Policy 'drifting': drift cannot be judged: .*limit/);
  });
});

describe('planRepair', () => {
  it('rebalances zones by moving the newest nodes of the zone over its share', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((id, i) => node(id, i + 1, { zone: 'az1' }));
    const snap = snapshot(nodes, [zones], []);
    const plan = planRepair(snap, detectClusterDrift(snap, types), ids(), 'all', types);
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement.zone])).toEqual([
      ['c', 'az2'],
      ['d', 'az2'],
    ]);
  });
});
