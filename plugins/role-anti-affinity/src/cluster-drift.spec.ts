import { createEvaluator, detectClusterDrift, planRepair, type IdSource } from '@trellis/decisions';
import * as path from 'path';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { aa, node, snapshot } from '@trellis/testing/drift-snapshot';

// The plugin's drift hook as the engine runs it: loaded as TRELLIS_POLICY_PLUGINS loads it, beside the built-in types.

function ids(): IdSource {
  let n = 0;
  return { uuid: () => `id-${++n}`, nodeName: () => `new-${n}` };
}

const registry = PolicyRegistry.withBuiltins();
loadPolicyPlugins(registry, [path.resolve(__dirname, '../index.ts')]);
const types = createEvaluator(registry);

describe('detectClusterDrift with role anti-affinity', () => {
  it('finds nothing when the role nodes are members of their group on distinct hosts', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h2' })];
    expect(detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2'] }]), types)).toEqual([]);
  });

  it('reports a vanished group with the nodes placed in it, named after the policy', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h2' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], []), types);
    expect(found).toEqual([
      expect.objectContaining({ kind: 'group_missing', group_id: 'g1', group_name: 'hdp-aa-1', policy_id: 'p-aa', binding_id: 'b-aa', node_ids: ['n1', 'n2'] }),
    ]);
    expect(found[0].message).toContain("Policy 'apart'");
  });

  it('reports two members on one host, but ignores nodes that are not ACTIVE', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' }), node('n3', 3, { group: 'g1', host: 'h1', status: 'DELETING' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2', 'srv-n3'] }]), types);
    expect(found).toEqual([expect.objectContaining({ kind: 'hosts_shared', host: 'h1', node_ids: ['n1', 'n2'] })]);
  });

  it('reports role nodes in no group (a cluster created before the policy), not nodes without the role', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { host: 'h2' }), node('edge', 3, { host: 'h3', roles: '' })];
    const found = detectClusterDrift(snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1'] }]), types);
    expect(found).toEqual([expect.objectContaining({ kind: 'role_node_ungrouped', group_id: 'g1', node_ids: ['n2'] })]);
  });

  it('turns binding data it cannot read into a finding naming the field, instead of throwing', () => {
    const broken = { ...aa, binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: '' }] } } } };
    const found = detectClusterDrift(snapshot([node('n1', 1, { group: 'g1' })], [broken], []), types);
    expect(found).toEqual([expect.objectContaining({ kind: 'policy_unreadable' })]);
    expect(found[0].message).toContain('groups[0].id');
  });
});

describe('planRepair with role anti-affinity', () => {
  it('creates a vanished group again under its name and replaces every node placed in it, keeping zones', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1', zone: 'az1' }), node('n2', 2, { group: 'g1', host: 'h2', zone: 'az2' })];
    const snap = snapshot(nodes, [aa], []);
    const plan = planRepair(snap, detectClusterDrift(snap, types), ids(), 'groups', types);
    expect(plan.groups).toEqual([{ ref: 'ref:server_group:id-1', name: 'hdp-aa-1', policy: 'anti-affinity', replaces: 'g1', binding_id: 'b-aa' }]);
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement])).toEqual([
      ['n1', { zone: 'az1', servergroup: 'ref:server_group:id-1' }],
      ['n2', { zone: 'az2', servergroup: 'ref:server_group:id-1' }],
    ]);
    expect(plan.binding_updates).toEqual([
      { binding_id: 'b-aa', data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: 'ref:server_group:id-1', name: 'hdp-aa-1', created: true }] } } } },
    ]);
  });

  it('keeps the first of the nodes sharing a host and replaces the others into the same group', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' }), node('n3', 3, { group: 'g1', host: 'h1' })];
    const snap = snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2', 'srv-n3'] }]);
    const plan = planRepair(snap, detectClusterDrift(snap, types), ids(), 'all', types);
    expect(plan.groups).toEqual([]);
    expect(plan.replacements.map((r) => [r.old_node_id, r.placement.servergroup, r.reasons])).toEqual([
      ['n2', 'g1', ['hosts_shared']],
      ['n3', 'g1', ['hosts_shared']],
    ]);
  });

  it('a growing action repairs groups only: shared hosts are left for the repair action', () => {
    const nodes = [node('n1', 1, { group: 'g1', host: 'h1' }), node('n2', 2, { group: 'g1', host: 'h1' })];
    const snap = snapshot(nodes, [aa], [{ id: 'g1', members: ['srv-n1', 'srv-n2'] }]);
    expect(planRepair(snap, detectClusterDrift(snap, types), ids(), 'groups', types).replacements).toEqual([]);
  });
});
