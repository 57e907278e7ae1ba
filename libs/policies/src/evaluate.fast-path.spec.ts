import fc from 'fast-check';
import { BUILTIN_POLICY_TYPES } from './builtins';
import { EvaluationInput, evaluate } from './evaluate';
import { PolicyClass } from './framework/policy';
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
