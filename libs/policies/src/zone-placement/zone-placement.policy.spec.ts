import fc from 'fast-check';
import { validatePolicySpec } from '../api';
import { EvaluationInput } from '../evaluate';
import { evaluateAtTestTime as evaluate } from '../testing/fixed-time';
import { planJson } from './zone-placement.policy';

const spec = (zones: unknown[]) => ({ type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones } });
const profile = { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: 1.0, properties: {} } };
const nodesIn = (dist: Record<string, number>) =>
  Object.entries(dist).flatMap(([zone, n]) =>
    Array.from({ length: n }, (_, i) => ({ id: `${zone}-${i}`, status: 'ACTIVE', created_at: `2024-01-0${(i % 9) + 1}T00:00:00Z`, data: { placement: { zone } } })),
  );

function run(action: EvaluationInput['action'], dist: Record<string, number>, zones: unknown[], cloudZones: unknown[] = ['AZ1', 'AZ2', 'AZ3', 'AZ4']) {
  return evaluate({
    policies: [{ id: 'zp-id', name: 'zp', spec: spec(zones), binding_id: 'b-zp' }],
    cluster: { id: 'c1', max_size: -1, profile, nodes: nodesIn(dist) },
    cloud: { availability_zones: cloudZones as string[] },
    action,
  });
}

const weighted = [
  { name: 'AZ1', weight: 100 },
  { name: 'AZ2', weight: 80 },
  { name: 'AZ3', weight: 60 },
  { name: 'AZ4', weight: 40 },
];

describe('zone placement validate (§5.1, decision 11)', () => {
  it.each([
    [[{ name: 'AZ1', weight: 0 }], "properties.zones[0].weight: the weight of zone 'AZ1' must be a positive integer, not 0."],
    [[{ name: 'AZ1' }, { name: 'AZ2', weight: -5 }], "properties.zones[1].weight: the weight of zone 'AZ2' must be a positive integer, not -5."],
    [[{ name: 'AZ1', weight: 1.5 }], "properties.zones[0].weight: the weight of zone 'AZ1' must be a positive integer, not 1.5."],
    [[{ name: 'AZ1' }, { name: 'AZ1' }], "properties.zones[1].name: the zone 'AZ1' is listed more than once."],
    [[{ weight: 3 }], 'properties.zones[0].name: every zone needs a name.'],
  ])('refuses %p with 400', (zones, message) => {
    expect(() => validatePolicySpec(spec(zones), { cloud: null })).toThrow(expect.objectContaining({ status: 400, message }));
  });

  it('asks Nova about the sorted names only at create time, printing a Python list', () => {
    const s = spec([{ name: 'AZ3' }, { name: 'AZ1' }, { name: 'AZ2' }]);
    expect(validatePolicySpec(s, { cloud: null }).typeName).toBe('senlin.policy.zone_placement-1.0');
    expect(() => validatePolicySpec(s, { cloud: { availability_zones: ['AZ1'] } })).toThrow(
      expect.objectContaining({ status: 400, message: "The specified name '['AZ2', 'AZ3']' could not be found." }),
    );
  });
});

describe('zone placement pre_op (§5.2-5.3)', () => {
  it('plans a scale-out and keeps other creation keys', () => {
    const out = run({ action: 'CLUSTER_SCALE_OUT', inputs: { count: 7 }, data: { creation: { count: 7, extra: 'x' } } }, { AZ1: 2, AZ2: 2, AZ3: 2, AZ4: 1 }, weighted);
    expect(out.data.creation).toEqual({ count: 7, extra: 'x', zones: { AZ1: 3, AZ2: 2, AZ3: 1, AZ4: 1 } });
  });

  it('plans a scale-in into deletion.zones', () => {
    const out = run({ action: 'CLUSTER_SCALE_IN', inputs: { count: 3 } }, { AZ1: 4, AZ2: 5, AZ3: 1, AZ4: 1 }, weighted);
    expect(out.data.deletion).toEqual({ count: 3, zones: { AZ2: 3 } });
  });

  it('clamps a scale-in larger than the cluster to the node count (decision 13)', () => {
    const out = run({ action: 'CLUSTER_SCALE_IN', inputs: { count: 9 } }, { AZ1: 1, AZ2: 1 }, weighted.slice(0, 2));
    expect(out.data.deletion).toEqual({ count: 2, zones: { AZ1: 1, AZ2: 1 } });
  });

  it('does nothing for a count of 0', () => {
    const out = run({ action: 'CLUSTER_SCALE_OUT', inputs: { count: 0 } }, {}, weighted);
    expect(out.data.creation).toBeUndefined();
    expect(out.trace[0].changed_keys).toEqual([]);
  });

  it('skips NODE_CREATE when the profile names a zone', () => {
    const out = evaluate({
      policies: [{ name: 'zp', spec: spec(weighted) }],
      cluster: { profile: { type: 'os.nova.server-1.0', spec: { properties: { availability_zone: 'AZ1' } } } },
      cloud: { availability_zones: ['AZ1'] },
      action: { action: 'NODE_CREATE' },
    });
    expect(out.data.creation).toBeUndefined();
  });

  it('uses only the zones Nova reports as available', () => {
    const out = run({ action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } }, {}, weighted, [
      { zoneName: 'AZ1', zoneState: { available: false } },
      { zoneName: 'AZ3', zoneState: { available: true } },
    ]);
    expect(out.data.creation).toEqual({ count: 2, zones: { AZ3: 2 } });
  });

  it.each([
    [{ action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } }, ['AZ9'], "Failed policy 'zp': No availability zone found available."],
    [
      { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 2000, strict: true } },
      ['AZ1'],
      "Failed policy 'zp': The target capacity (2000) is greater than the maximum number of nodes allowed per cluster (1000).",
    ],
  ])('fails the chain: %p', (action, cloudZones, reason) => {
    const out = run(action, { AZ1: 1 }, weighted, cloudZones);
    expect(out.status).toBe('ERROR');
    expect(out.reason).toBe(reason);
    expect(out.plan?.error).toBe(`Policy check failure: ${reason}`);
  });

  it('runs the resize parser and plans a shrinking resize', () => {
    const out = run({ action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'CHANGE_IN_CAPACITY', number: -3 } }, { AZ1: 4, AZ2: 5, AZ3: 1, AZ4: 1 }, weighted);
    expect(out.data.deletion).toEqual({ count: 3, zones: { AZ2: 3 } });
  });
});

describe('the plan in the trace note', () => {
  it('is JSON.stringify of the plan, for any zone names and counts', () => {
    const name = fc.oneof(fc.constantFrom('az1', 'nova', '1', '007', '__proto__', ''), fc.string(), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('a"b', 'a\\b', 'tab\t', '\ud800'));
    const count = fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0, -0, 1e21, Number.MAX_SAFE_INTEGER, NaN, Infinity));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, count), { maxLength: 6 }), (entries) => {
        const plan: Record<string, number> = {};
        for (const [k, v] of entries) Object.defineProperty(plan, k, { value: v, enumerable: true, writable: true, configurable: true });
        expect(planJson(plan)).toBe(JSON.stringify(plan));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('zone placement attach (decision 3)', () => {
  it('refuses to join an affinity policy that chooses zones', () => {
    const out = evaluate({
      hook: 'attach',
      policies: [{ id: 'zp-id', name: 'zp', spec: spec(weighted) }],
      attached: [{ id: 'aff-id', name: 'aff', spec: { type: 'senlin.policy.affinity', version: '1.0', properties: { availability_zone: 'AZ1' } } }],
      cluster: { id: 'c1', profile },
    });
    expect(out.ok).toBe(false);
    expect(out.message).toBe(
      "The zone placement policy conflicts with the attached affinity policy 'aff', which sets availability_zone or enable_drs_extension: both would choose the availability zone of new nodes.",
    );
  });

  it('joins an affinity policy that only groups servers', () => {
    const out = evaluate({
      hook: 'attach',
      policies: [{ id: 'zp-id', name: 'zp', spec: spec(weighted) }],
      attached: [{ id: 'aff-id', name: 'aff', spec: { type: 'senlin.policy.affinity', version: '1.0', properties: {} } }],
      cluster: { id: 'c1', profile },
    });
    expect(out).toMatchObject({ ok: true, binding_data: {}, cloud_changes: [] });
  });

  it('refuses a profile type other than os.nova.server-1.0', () => {
    const out = evaluate({ hook: 'attach', policies: [{ spec: spec(weighted) }], cluster: { profile: { type: 'os.heat.stack-1.0', spec: {} } } });
    expect(out.message).toBe('Policy not applicable on profile type: os.heat.stack-1.0');
  });
});
