import { buildPolicyPlan } from './policy-plan';
import { ClusterSnapshot, PolicyAction } from '../framework/types';

/** The plan reads `data.deletion.candidates` as `candidates.map(String)` did (a loop for a list of strings). */
describe('buildPolicyPlan: deletion candidates', () => {
  const cluster: ClusterSnapshot = {
    id: 'c',
    name: 'c',
    min_size: 0,
    max_size: -1,
    desired_capacity: 3,
    profile: { type: 'os.nova.server-1.0', spec: {} },
    nodes: [
      { id: 'n1', status: 'ACTIVE', created_at: '2024-01-01T00:00:00.000Z', data: { placement: { zone: 'az1' } } },
      { id: 'n2', status: 'ACTIVE', created_at: '2024-01-02T00:00:00.000Z', data: { placement: { zone: 'az2' } } },
      { id: '3', status: 'ACTIVE', created_at: '2024-01-03T00:00:00.000Z', data: { placement: { zone: 'az3' } } },
    ],
  };
  const plan = (candidates: unknown) => {
    const action: PolicyAction = { action: 'CLUSTER_SCALE_IN', target: 'c', inputs: {}, data: { deletion: { count: 1, candidates } } };
    return buildPolicyPlan({ action, cluster, status: 'OK', reason: '', random: () => 0, maxNodesPerCluster: 1000 });
  };

  it('takes a list of strings as it is', () => {
    expect(plan(['n2', 'n1']).delete).toEqual([
      { node_id: 'n2', zone: 'az2' },
      { node_id: 'n1', zone: 'az1' },
    ]);
  });

  it('reads anything else as map(String) does: numbers as strings, holes kept, a subclass through map', () => {
    expect(plan([3, 'n1']).delete).toEqual([
      { node_id: '3', zone: 'az3' },
      { node_id: 'n1', zone: 'az1' },
    ]);
    // eslint-disable-next-line no-sparse-arrays
    const holey = [, 'n2'];
    const mapped = holey.map(String);
    expect(plan(holey).delete).toEqual(plan(mapped).delete);
    expect(plan(holey).desired_capacity).toBe(plan(mapped).desired_capacity);
    class Ids extends Array<unknown> {}
    const ids = Ids.from(['n1', 'n2']);
    expect(plan(ids).delete).toEqual(plan(['n1', 'n2']).delete);
    const inherited = [, 'n2'];
    (Array.prototype as unknown as Record<number, unknown>)[0] = 'n1';
    try {
      expect(plan(inherited).delete).toEqual(plan(inherited.map(String)).delete);
      // map asks HasProperty, which sees the inherited element
      expect(plan(inherited).delete[0].node_id).toBe('n1');
    } finally {
      delete (Array.prototype as unknown as Record<number, unknown>)[0];
    }
  });

  it('ignores anything but a list (the count decides)', () => {
    expect(plan('n1').delete).toEqual(plan(undefined).delete);
    expect(plan('n1').delete).toHaveLength(1);
    expect(plan(null).delete).toEqual(plan(undefined).delete);
  });
});
