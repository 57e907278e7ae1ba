import { validatePolicySpec } from '../api';
import { EvaluationInput, evaluate } from '../evaluate';
import { inCooldown, scalingAdjustmentCount } from './plan';

const scaling = (event: string, adjustment?: Record<string, unknown>) => ({
  type: 'senlin.policy.scaling',
  version: '1.0',
  properties: adjustment ? { event, adjustment } : { event },
});
const cluster = (nodes: number, min_size = 0, max_size = -1) => ({
  id: 'c1',
  min_size,
  max_size,
  nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}`, status: 'ACTIVE', created_at: `2024-01-01T00:00:0${i % 10}Z` })),
});
const run = (spec: unknown, action: EvaluationInput['action'], c = cluster(4), extra: Record<string, unknown> = {}) =>
  evaluate({ policies: [{ id: 'sp1', name: 'sp', spec, binding_id: 'b1', ...extra }], cluster: c, action, now: '2024-05-01T12:00:00Z' });

describe('scaling validate (§7)', () => {
  it.each([
    [{ number: 0 }, "the 'number' for 'adjustment' must be > 0"],
    [{ min_step: -1 }, "the 'min_step' for 'adjustment' must be >= 0"],
    [{ cooldown: -1 }, "the 'cooldown' for 'adjustment' must be >= 0"],
  ])('refuses %p', (adjustment, message) => {
    expect(() => validatePolicySpec(scaling('CLUSTER_SCALE_IN', adjustment), { cloud: null })).toThrow(expect.objectContaining({ status: 400, message }));
  });
  it('requires the event', () => {
    expect(() => validatePolicySpec({ type: 'senlin.policy.scaling', version: 1, properties: {} }, { cloud: null })).toThrow(
      expect.objectContaining({ status: 400, message: "properties.event: Required spec item 'event' not provided" }),
    );
  });
});

describe('scalingAdjustmentCount', () => {
  it.each([
    ['CLUSTER_SCALE_IN', 'EXACT_CAPACITY', 3, 1, 10, 7],
    ['CLUSTER_SCALE_OUT', 'EXACT_CAPACITY', 12, 1, 10, 2],
    ['CLUSTER_SCALE_OUT', 'CHANGE_IN_CAPACITY', 2, 1, 10, 2],
    ['CLUSTER_SCALE_OUT', 'CHANGE_IN_PERCENTAGE', 25, 1, 10, 2], // int(2.5) = 2
    ['CLUSTER_SCALE_OUT', 'CHANGE_IN_PERCENTAGE', 5, 1, 10, 1], // int(0.5) = 0 → min_step
    ['CLUSTER_SCALE_OUT', 'CHANGE_IN_PERCENTAGE', 5, 0, 10, 0],
  ])('%s %s number %p min_step %p current %p → %p', (event, type, number, min_step, current, expected) => {
    expect(scalingAdjustmentCount(event, { type, number, min_step }, current)).toBe(expected);
  });
});

describe('scaling pre_op', () => {
  it('validates and writes creation.count for its event', () => {
    const out = run(scaling('CLUSTER_SCALE_OUT', { number: 2 }), { action: 'CLUSTER_SCALE_OUT' });
    expect(out.data).toMatchObject({ creation: { count: 2 } });
    expect(out.trace[0]).toMatchObject({ verdict: 'OK', changed_keys: ['status', 'reason', 'creation'] });
    expect(out.plan).toMatchObject({ desired_capacity: 6, error: null });
  });

  it('replaces an existing deletion dict on scale-in', () => {
    const out = run(scaling('CLUSTER_SCALE_IN'), { action: 'CLUSTER_SCALE_IN', inputs: { count: '2' }, data: { deletion: { zones: { a: 1 } } } });
    expect(out.data.deletion).toEqual({ count: 2 });
  });

  it('is skipped for the other event', () => {
    const out = run(scaling('CLUSTER_SCALE_IN'), { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } });
    expect(out.trace[0]).toMatchObject({ ran: false, verdict: 'SKIPPED', skipped_reason: 'not checked BEFORE CLUSTER_SCALE_OUT' });
  });

  it.each([
    [{ count: 'x' }, "Failed policy 'sp': Invalid count (x) for action 'CLUSTER_SCALE_OUT'."],
    [{ count: 0 }, "Failed policy 'sp': Invalid count (0) for action 'CLUSTER_SCALE_OUT'."],
  ])('refuses inputs %p', (inputs, reason) => {
    expect(run(scaling('CLUSTER_SCALE_OUT'), { action: 'CLUSTER_SCALE_OUT', inputs }).reason).toBe(reason);
  });

  it('enforces the size strictly without best effort and trims with it', () => {
    expect(run(scaling('CLUSTER_SCALE_OUT', { number: 3 }), { action: 'CLUSTER_SCALE_OUT' }, cluster(4, 0, 5)).reason).toBe(
      "Failed policy 'sp': The target capacity (7) is greater than the cluster's max_size (5).",
    );
    const best = run(scaling('CLUSTER_SCALE_OUT', { number: 3, best_effort: true }), { action: 'CLUSTER_SCALE_OUT' }, cluster(4, 0, 5));
    expect(best.data.creation).toEqual({ count: 1 });
    const shrink = run(scaling('CLUSTER_SCALE_IN', { number: 3, best_effort: true }), { action: 'CLUSTER_SCALE_IN' }, cluster(4, 2, 5));
    expect(shrink.data.deletion).toMatchObject({ count: 2 });
  });

  it('refuses while the cooldown holds', () => {
    const spec = scaling('CLUSTER_SCALE_OUT', { cooldown: 60 });
    expect(run(spec, { action: 'CLUSTER_SCALE_OUT' }, cluster(1), { last_op: '2024-05-01T11:59:30Z' }).reason).toBe(
      "Failed policy 'sp': Policy sp1 cooldown is still in progress.",
    );
    expect(run(spec, { action: 'CLUSTER_SCALE_OUT' }, cluster(1), { last_op: '2024-05-01T11:58:00Z' }).status).toBe('OK');
    expect(inCooldown(null, 60, 0)).toBe(false);
  });
});

describe('scaling post_op', () => {
  it('stamps last_op on both scale events', () => {
    for (const action of ['CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT']) {
      const out = evaluate({
        hook: 'post_op',
        policies: [{ id: 'sp1', name: 'sp', spec: scaling('CLUSTER_SCALE_OUT'), binding_id: 'b1' }],
        action: { action },
        now: '2024-05-01T12:00:00Z',
      });
      expect(out.binding_updates).toEqual([{ binding_id: 'b1', last_op: '2024-05-01T12:00:00.000Z' }]);
      expect(out.plan).toBeNull();
    }
  });
});
