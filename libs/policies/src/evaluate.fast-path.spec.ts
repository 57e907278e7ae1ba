import fc from 'fast-check';
import { BUILTIN_POLICY_TYPES } from './builtins';
import { EvaluationInput, evaluate } from './evaluate';
import { HookContext, PolicyClass } from './framework/policy';
import { DeletionPolicy } from './deletion/deletion.policy';
import { PolicyRegistry } from './framework/registry';
import { clusterAction, deletionPolicy, isoTime, placementData, policyChains, preOpSnapshot, server, zone, zonePlacementPolicy } from './testing/arbitraries';

/**
 * evaluate() shares one zone index between zone placement, the deletion policy and the engine plan
 * only when every policy is a built-in type. The same types registered as subclasses (plugins, as
 * far as evaluate() knows) run without it, on the plain per-node reads: the two must decide alike.
 */
function plainRegistry(): PolicyRegistry {
  const registry = new PolicyRegistry();
  for (const cls of BUILTIN_POLICY_TYPES) {
    const Base = cls as unknown as new (...args: never[]) => object;
    registry.register(class extends Base {} as unknown as PolicyClass);
  }
  return registry;
}

function outcome(fn: () => unknown): string {
  try {
    return JSON.stringify(fn());
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

const time = fc.oneof(
  isoTime,
  fc.constantFrom(null, undefined, '', '2024-13-45T00:00:00.000Z', '2024-02-30T10:00:00.000Z', '2024-01-01T00:00:00Z', 'yesterday', '2024-01-01 10:00:00', '2024-01-01T00:00:00.5Z'),
);
const node = fc.record(
  {
    id: fc.oneof(fc.constantFrom('n1', 'n2', 'n3', 'n4'), fc.uuid()),
    status: fc.constantFrom('ACTIVE', 'ACTIVE', 'ACTIVE', 'ERROR', 'WARNING', 'CREATING'),
    tainted: fc.boolean(),
    created_at: time,
    profile_created_at: time,
    data: fc.oneof(fc.constant(null), placementData),
    server,
  },
  { requiredKeys: ['id'] },
);
const weight = fc.oneof(fc.integer({ min: 1, max: 200 }), fc.constantFrom('50', 0, -1, 'x', 2.5));
const zonePolicy = zonePlacementPolicy(fc.constantFrom('1.0', 1), fc.record({ name: zone, weight }, { requiredKeys: ['name'] }));
const deletion = deletionPolicy(
  fc.record({ criteria: fc.constantFrom('OLDEST_FIRST', 'YOUNGEST_FIRST', 'OLDEST_PROFILE_FIRST', 'RANDOM', 'BAD'), grace_period: fc.constantFrom(0, 30, '5') }, { requiredKeys: [] }),
);
const count = fc.oneof(fc.integer({ min: -2, max: 25 }), fc.constantFrom('3', 'x', null, 1.5));
const snapshot = preOpSnapshot({
  nodes: fc.array(node, { maxLength: 60 }),
  policies: policyChains([zonePolicy], [zonePolicy, deletion], [deletion]),
  action: clusterAction(count, fc.record({ action: fc.constantFrom('NODE_DELETE', 'NODE_CREATE'), target: fc.constantFrom('n1', 'n2') })),
});

describe('evaluate(): the shared zone index decides as the plain per-node reads do', () => {
  const builtin = PolicyRegistry.withBuiltins();
  const plain = plainRegistry();

  it('gives the same output, byte for byte, on random snapshots', () => {
    fc.assert(
      fc.property(snapshot, (input) => {
        const text = JSON.stringify(input);
        const fast = outcome(() => evaluate(JSON.parse(text), { registry: builtin }));
        const slow = outcome(() => evaluate(JSON.parse(text), { registry: plain }));
        expect(fast).toBe(slow);
      }),
      { numRuns: 3000 },
    );
  });

  it('fails on a null node exactly as the plain reads do', () => {
    const input = {
      policies: [{ spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1' }] } } }],
      cluster: { nodes: [{ id: 'n1', data: { placement: { zone: 'az1' } } }, null] },
      cloud: { availability_zones: ['az1'] },
      action: { action: 'CLUSTER_SCALE_IN', inputs: { count: 1 } },
      now: '2026-01-01T00:00:00.000Z',
    } as unknown as EvaluationInput;
    const text = JSON.stringify(input);
    const fast = outcome(() => evaluate(JSON.parse(text), { registry: builtin }));
    expect(fast).toBe(outcome(() => evaluate(JSON.parse(text), { registry: plain })));
    expect(fast).toContain('Cannot read properties of null');
  });
});

/**
 * A chain of built-in policies keeps no shallow copies of action.data's values to catch a hook that
 * changes one in place (ChainContext.replacesDataValues): every built-in hook must replace a value
 * it changes. Here the values of action.data are frozen, so a built-in hook that changed one in
 * place would throw (and fail the chain); the plain registry's subclasses take the chain's copies.
 */
describe('evaluate(): built-in hooks replace the values of action.data, never change them in place', () => {
  const builtin = PolicyRegistry.withBuiltins();
  const plain = plainRegistry();
  const adjustment = fc.record(
    {
      type: fc.constantFrom('CHANGE_IN_CAPACITY', 'CHANGE_IN_PERCENTAGE', 'EXACT_CAPACITY'),
      number: fc.integer({ min: 1, max: 20 }),
      min_step: fc.integer({ min: 0, max: 3 }),
      best_effort: fc.boolean(),
      cooldown: fc.constantFrom(0, 300),
    },
    { requiredKeys: [] },
  );
  const scaling = fc
    .record({ event: fc.constantFrom('CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT'), adjustment, last_op: fc.oneof(isoTime, fc.constant(null)) })
    .map(({ event, adjustment, last_op }) => ({ spec: { type: 'senlin.policy.scaling', version: '1.0', properties: { event, adjustment } }, last_op }));
  const affinity = fc.record({ servergroup_id: fc.constantFrom('g1', ''), zone: fc.constantFrom(undefined, 'az1') }).map(({ servergroup_id, zone }) => ({
    spec: {
      type: 'senlin.policy.affinity',
      version: '1.0',
      properties: { servergroup: { name: 'web', policies: 'anti-affinity' }, ...(zone ? { availability_zone: zone } : {}) },
    },
    binding_data: { AffinityPolicy: { version: '1.0', data: { inherited_group: false, servergroup_id } } },
  }));
  const value = fc.oneof(
    fc.record({ count: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant('2')), zones: fc.dictionary(zone, fc.integer({ min: 0, max: 3 }), { maxKeys: 3 }) }, { requiredKeys: [] }),
    fc.record({ count: fc.integer({ min: 0, max: 5 }), placements: fc.array(fc.record({ zone, servergroup: fc.constant('g0') }, { requiredKeys: [] }), { maxLength: 3 }) }, { requiredKeys: [] }),
    fc.constant({}),
    fc.constant(null),
  );
  const data = fc.record({ deletion: value, creation: value, placement: value, hooks: value, other: value }, { requiredKeys: [] });
  const withData = fc.record({
    input: preOpSnapshot({
      nodes: fc.array(node, { maxLength: 30 }),
      policies: policyChains([scaling, zonePolicy, affinity, deletion], [scaling, scaling, zonePolicy, deletion], [affinity, zonePolicy], [zonePolicy, deletion]),
      action: clusterAction(count, fc.record({ action: fc.constantFrom('NODE_DELETE', 'NODE_CREATE'), target: fc.constantFrom('n1', 'n2') })),
    }),
    data,
  });

  const deepFreeze = (v: unknown): unknown => {
    if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
      Object.freeze(v);
    }
    return v;
  };

  it('gives the output of the chain that keeps copies, on frozen values', () => {
    fc.assert(
      fc.property(withData, ({ input, data }) => {
        const text = JSON.stringify({ ...input, action: { ...(input.action as object), data } });
        const frozen = JSON.parse(text) as EvaluationInput;
        for (const v of Object.values(frozen.action?.data ?? {})) deepFreeze(v);
        const fast = outcome(() => evaluate(frozen, { registry: builtin }));
        expect(fast).not.toMatch(/read only|not extensible|Cannot (add|assign|delete)/);
        expect(fast).toBe(outcome(() => evaluate(JSON.parse(text), { registry: plain })));
      }),
      { numRuns: 2000 },
    );
  });

  it('fails for a built-in hook that changes a value in place', () => {
    const original = DeletionPolicy.prototype.preOp;
    DeletionPolicy.prototype.preOp = function (this: DeletionPolicy, ctx: HookContext) {
      const d = ctx.action.data.deletion as Record<string, unknown> | undefined;
      if (d && typeof d === 'object') d.grace_period = 7;
      return original.call(this, ctx);
    };
    try {
      const input = {
        policies: [{ spec: { type: 'senlin.policy.deletion', version: '1.1', properties: {} } }],
        cluster: { nodes: [{ id: 'n1', status: 'ACTIVE', created_at: '2024-01-01T00:00:00.000Z' }] },
        action: { action: 'CLUSTER_SCALE_IN', inputs: {}, data: { deletion: { count: 1 } } },
        now: '2026-01-01T00:00:00.000Z',
      };
      const text = JSON.stringify(input);
      const frozen = JSON.parse(text) as EvaluationInput;
      deepFreeze(frozen.action?.data?.deletion);
      // the check above fails: the frozen value throws, where the same hook on unfrozen data passes
      expect(outcome(() => evaluate(frozen, { registry: builtin }))).toMatch(/read only|not extensible|Cannot (add|assign|delete)/);
      const slow = evaluate(JSON.parse(text), { registry: plain });
      expect(slow.status).toBe('OK');
    } finally {
      DeletionPolicy.prototype.preOp = original;
    }
  });
});
