import { EvaluationInput } from '../evaluate';
import { evaluateAtTestTime as evaluate } from '../testing/fixed-time';

const deletion = (properties: Record<string, unknown> = {}, version = '1.1') => ({ type: 'senlin.policy.deletion', version, properties });
const nodes = [
  { id: 'N1', status: 'ACTIVE', created_at: '2024-01-01T00:00:00Z', data: { placement: { zone: 'AZ1' } } },
  { id: 'N2', status: 'ACTIVE', created_at: '2024-01-02T00:00:00Z', data: { placement: { zone: 'AZ2' } } },
  { id: 'N3', status: 'ACTIVE', created_at: '2024-01-03T00:00:00Z', data: { placement: { zone: 'AZ2' } } },
  { id: 'N4', status: 'ERROR', created_at: '2024-01-04T00:00:00Z', data: { placement: { zone: 'AZ1' } } },
  { id: 'N5', status: 'ACTIVE', created_at: '2024-01-05T00:00:00Z', server: { availability_zone: 'AZ2' } },
];
const run = (spec: unknown, action: EvaluationInput['action']) =>
  evaluate({ policies: [{ id: 'dp', name: 'del', spec }], cluster: { id: 'c1', nodes }, action });

describe('deletion policy pre_op (§8)', () => {
  it('serves versions 1.0 and 1.1 with the same class', () => {
    expect(run(deletion({}, '1.0'), { action: 'CLUSTER_SCALE_IN', inputs: { count: 1 } }).trace[0].policy_type).toBe('senlin.policy.deletion-1.0');
  });

  it('picks victims per zone of the plan, zones by name', () => {
    const out = run(deletion({ criteria: 'OLDEST_FIRST' }), { action: 'CLUSTER_SCALE_IN', data: { deletion: { count: 3, zones: { AZ2: 2, AZ1: 1 } } } });
    expect(out.data).toMatchObject({
      status: 'OK',
      reason: 'Completed policy checking.',
      hooks: {},
      deletion: {
        count: 3,
        zones: { AZ2: 2, AZ1: 1 },
        candidates: ['N4', 'N2', 'N3'],
        destroy_after_deletion: true,
        grace_period: 0,
        reduce_desired_capacity: true,
      },
    });
    expect(out.trace[0].reason).toBe('candidates N4, N2, N3');
    expect(out.plan?.delete).toEqual([
      { node_id: 'N4', zone: 'AZ1' },
      { node_id: 'N2', zone: 'AZ2' },
      { node_id: 'N3', zone: 'AZ2' },
    ]);
  });

  it.each([
    ['YOUNGEST_FIRST', ['N4', 'N5']],
    ['OLDEST_FIRST', ['N4', 'N1']],
  ])('%s without a zone plan', (criteria, expected) => {
    const out = run(deletion({ criteria }), { action: 'CLUSTER_SCALE_IN', inputs: { count: 2 } });
    expect((out.data.deletion as { candidates: string[] }).candidates).toEqual(expected);
  });

  it('uses the given candidates and the deleted node', () => {
    expect(run(deletion({ destroy_after_deletion: false }), { action: 'CLUSTER_DEL_NODES', inputs: { candidates: ['N2'] } }).data.deletion).toEqual({
      count: 1,
      candidates: ['N2'],
      destroy_after_deletion: false,
      grace_period: 0,
      reduce_desired_capacity: true,
    });
    const out = run(deletion(), { action: 'NODE_DELETE', target: 'N3' });
    expect((out.data.deletion as { candidates: string[] }).candidates).toEqual(['N3']);
    expect(out.plan).toMatchObject({ delete: [{ node_id: 'N3', zone: 'AZ2' }], desired_capacity: 4 });
  });

  it('copies the hooks property and stops on a growing resize', () => {
    const out = run(deletion({ hooks: { type: 'webhook', params: { url: 'http://x' } } }), {
      action: 'CLUSTER_RESIZE',
      inputs: { adjustment_type: 'CHANGE_IN_CAPACITY', number: 1 },
    });
    expect(out.data.hooks).toEqual({ type: 'webhook', params: { queue: '', url: 'http://x' }, timeout: 0 });
    expect(out.data.creation).toEqual({ count: 1 });
    expect(out.trace[0].reason).toBe('the resize does not shrink the cluster: no victims');
  });

  it('records a resize error', () => {
    const out = run(deletion(), { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 2000 } });
    expect(out.reason).toBe("Failed policy 'del': The target capacity (2000) is greater than the maximum number of nodes allowed per cluster (1000).");
  });

  it('picks random victims from the seeded source, deterministically', () => {
    const one = run(deletion(), { action: 'CLUSTER_SCALE_IN', inputs: { count: 3 } });
    const two = run(deletion(), { action: 'CLUSTER_SCALE_IN', inputs: { count: 3 } });
    const candidates = (one.data.deletion as { candidates: string[] }).candidates;
    expect(candidates[0]).toBe('N4');
    expect(new Set(candidates).size).toBe(3);
    expect((two.data.deletion as { candidates: string[] }).candidates).toEqual(candidates);
  });
});
