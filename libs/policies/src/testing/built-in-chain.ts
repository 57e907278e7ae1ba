import { AFFINITY_POLICY_TYPE } from '../builtins';

/**
 * A chain of every built-in type (scaling out and in, zone placement, deletion, affinity bound to
 * group `g1`) and six ACTIVE nodes over two zones, for tests that run every hook of the built-in
 * types on a snapshot lacking some fact (reads-hypervisors, reads-group-members).
 */
export const builtInSpec = (type: string, properties: Record<string, unknown>) => ({
  type,
  version: type.endsWith('deletion') ? '1.1' : '1.0',
  properties,
});

export const builtInChain = (affinity: Record<string, unknown>) => [
  { id: 'p-out', name: 'out', spec: builtInSpec('senlin.policy.scaling', { event: 'CLUSTER_SCALE_OUT', adjustment: { type: 'CHANGE_IN_CAPACITY', number: 2 } }) },
  { id: 'p-in', name: 'in', spec: builtInSpec('senlin.policy.scaling', { event: 'CLUSTER_SCALE_IN', adjustment: { type: 'CHANGE_IN_CAPACITY', number: 2 } }) },
  { id: 'p-zones', name: 'zones', spec: builtInSpec('senlin.policy.zone_placement', { zones: [{ name: 'az1' }, { name: 'az2' }] }) },
  { id: 'p-del', name: 'del', spec: builtInSpec('senlin.policy.deletion', { criteria: 'OLDEST_FIRST' }) },
  {
    id: 'p-aff',
    name: 'aff',
    spec: builtInSpec(AFFINITY_POLICY_TYPE, { servergroup: { policies: 'anti-affinity' }, ...affinity }),
    binding_data: { AffinityPolicy: { version: '1.0', data: { servergroup_id: 'g1', inherited_group: false } } },
  },
];

/** Six ACTIVE nodes, odd ones in az2; `placement` adds to each node's recorded placement. */
export const chainNodes = (placement: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: 6 }, (_, i) => ({
    id: `n${i}`,
    name: `node-${i}`,
    index: i + 1,
    status: 'ACTIVE',
    created_at: `2026-11-0${i + 1}T00:00:00.000Z`,
    profile_created_at: '2026-10-01T00:00:00.000Z',
    tainted: false,
    data: { placement: { zone: i % 2 ? 'az2' : 'az1', ...placement(i) } },
    metadata: {},
    physical_id: `s${i}`,
    server: { availability_zone: i % 2 ? 'az2' : 'az1', host: null },
  }));

/** Every action the chain takes part in, with its inputs. */
export const CHAIN_ACTIONS: Array<[string, Record<string, unknown>]> = [
  ['CLUSTER_SCALE_OUT', {}],
  ['CLUSTER_SCALE_IN', {}],
  ['CLUSTER_RESIZE', { adjustment_type: 'EXACT_CAPACITY', number: 9 }],
  ['CLUSTER_RESIZE', { adjustment_type: 'EXACT_CAPACITY', number: 3 }],
  ['CLUSTER_DEL_NODES', { candidates: ['n1'], count: 1 }],
  ['NODE_CREATE', {}],
];
