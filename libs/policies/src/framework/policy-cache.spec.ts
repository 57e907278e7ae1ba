import { evaluate, EvaluationInput } from '../evaluate';
import { PolicyCache } from './policy-cache';
import { Policy, PolicyClass, PolicyType } from './policy';
import { PolicyRegistry } from './registry';

const zones = (weights: number[]) => ({
  type: 'senlin.policy.zone_placement',
  version: '1.0',
  properties: { zones: weights.map((weight, i) => ({ name: `az${i + 1}`, weight })) },
});

/** A scale-out by 4 of an empty cluster with one zone placement policy of id `zp`. */
function input(spec: unknown, name = 'zones'): EvaluationInput {
  return {
    now: '2025-01-01T00:00:00.000Z',
    cluster: { id: 'c1', name: 'web', desired_capacity: 0, nodes: [] },
    cloud: { availability_zones: [{ zoneName: 'az1', zoneState: { available: true } }, { zoneName: 'az2', zoneState: { available: true } }] },
    action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 4 } },
    policies: [{ id: 'zp', name, spec }],
  };
}

const creation = (registry: PolicyRegistry, i: EvaluationInput) => evaluate(i, { registry }).data.creation;

describe('built policies kept per policy id (PolicyCache)', () => {
  it('decides on the spec it is given when another spec comes under the same id', () => {
    const registry = PolicyRegistry.withBuiltins();
    expect(creation(registry, input(zones([100, 100])))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
    expect(creation(registry, input(zones([300, 100])))).toEqual({ count: 4, zones: { az1: 3, az2: 1 } });
    // and back: the same as a registry that never saw the other spec
    expect(creation(registry, input(zones([100, 100])))).toEqual(creation(PolicyRegistry.withBuiltins(), input(zones([100, 100]))));
  });

  it('names the policy as the input does when it was renamed', () => {
    const registry = PolicyRegistry.withBuiltins();
    evaluate(input(zones([100, 100]), 'before'), { registry });
    expect(evaluate(input(zones([100, 100]), 'after'), { registry }).trace[0].policy_name).toBe('after');
  });

  it('is not reached by a caller changing its input after the decision', () => {
    const registry = PolicyRegistry.withBuiltins();
    const first = input(zones([100, 100]));
    evaluate(first, { registry });
    ((first.policies![0].spec as ReturnType<typeof zones>).properties.zones[0] as { weight: number }).weight = 300;
    expect(creation(registry, input(zones([100, 100])))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
  });

  it('tells apart specs that differ only in key order, a -0, or a hole', () => {
    const registry = PolicyRegistry.withBuiltins();
    const spec = { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: 'OLDEST_FIRST', grace_period: 0 } };
    const kept = registry.instantiate(spec, { id: 'd', name: null });
    expect(registry.instantiate(JSON.parse(JSON.stringify(spec)), { id: 'd', name: null })).toBe(kept);
    const reordered = { type: 'senlin.policy.deletion', version: '1.1', properties: { grace_period: 0, criteria: 'OLDEST_FIRST' } };
    expect(registry.instantiate(reordered, { id: 'd', name: null })).not.toBe(kept);
    const negative = { type: 'senlin.policy.deletion', version: '1.1', properties: { grace_period: -0, criteria: 'OLDEST_FIRST' } };
    expect(registry.instantiate(negative, { id: 'd', name: null }).spec.properties.grace_period).toBe(-0);
    const list = zones([100, 100]);
    const withHole = { ...list, properties: { zones: [list.properties.zones[0], , list.properties.zones[1]] } };
    const three = registry.instantiate(zones([100, 100, 100]), { id: 'z', name: null });
    const holed = registry.instantiate(withHole, { id: 'z', name: null });
    expect(holed).not.toBe(three);
    expect(holed.properties).toEqual(PolicyRegistry.withBuiltins().create(withHole).properties);
  });

  describe('with spec digests (the engine loader\'s, trusted)', () => {
    const trusted = (registry: PolicyRegistry, i: EvaluationInput) => evaluate(i, { registry, trustSpecDigests: true }).data.creation;
    const withDigest = (i: EvaluationInput, spec_digest: string) => ({ ...i, policies: [{ ...i.policies![0], spec_digest }] });

    it('uses the policy built under the same id, name and digest without comparing the spec', () => {
      const registry = PolicyRegistry.withBuiltins();
      expect(trusted(registry, withDigest(input(zones([100, 100])), 'd1'))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
      // another spec under the same digest is taken on trust: the digest is what a hit rests on (which is
      // why only the engine's loader may vouch for one)
      expect(trusted(registry, withDigest(input(zones([300, 100])), 'd1'))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
      // a new digest, or another name, is a miss: the spec decides
      expect(trusted(registry, withDigest(input(zones([300, 100])), 'd2'))).toEqual({ count: 4, zones: { az1: 3, az2: 1 } });
      expect(trusted(registry, withDigest(input(zones([100, 300]), 'renamed'), 'd2'))).toEqual({ count: 4, zones: { az1: 1, az2: 3 } });
    });

    it('ignores digests from a caller that does not vouch for them (user input to POST /v1/evaluations)', () => {
      const registry = PolicyRegistry.withBuiltins();
      expect(creation(registry, withDigest(input(zones([100, 100])), 'd1'))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
      expect(creation(registry, withDigest(input(zones([300, 100])), 'd1'))).toEqual({ count: 4, zones: { az1: 3, az2: 1 } });
    });

    it('cannot be reached through an entry an untrusted caller stored: a user cannot plant a policy for the engine', () => {
      const registry = PolicyRegistry.withBuiltins();
      // a user sends the engine's id and digest with a spec of their own
      expect(creation(registry, withDigest(input(zones([300, 100])), 'real'))).toEqual({ count: 4, zones: { az1: 3, az2: 1 } });
      // the engine, with the real spec and its digest, decides on the real spec
      expect(trusted(registry, withDigest(input(zones([100, 100])), 'real'))).toEqual({ count: 4, zones: { az1: 2, az2: 2 } });
    });

    it('learns the digest on a hit found by comparing, then skips the comparison', () => {
      const registry = PolicyRegistry.withBuiltins();
      const spec = zones([100, 100]);
      const built = registry.instantiate(spec, { id: 'zp', name: null });
      expect(registry.instantiate(JSON.parse(JSON.stringify(spec)), { id: 'zp', name: null }, 'd')).toBe(built);
      expect(registry.instantiate(zones([1, 2, 3]), { id: 'zp', name: null }, 'd')).toBe(built);
      expect(registry.instantiate(zones([1, 2, 3]), { id: 'zp', name: null })).not.toBe(built);
    });
  });

  it('builds a plugin type every time: its hooks may keep state on the instance', () => {
    @PolicyType({ name: 'x.counter', versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2024.01' }] }, profileTypes: ['ANY'], targets: [], priority: 1, hooks: [], properties: {} })
    class Counter extends Policy {}
    const registry = PolicyRegistry.withBuiltins().register(Counter as unknown as PolicyClass);
    const spec = { type: 'x.counter', version: '1.0', properties: {} };
    expect(registry.instantiate(spec, { id: 'p', name: null })).not.toBe(registry.instantiate(spec, { id: 'p', name: null }));
  });

  it('keeps the newest ids up to its capacity, whichever ids share a bucket', () => {
    const registry = PolicyRegistry.withBuiltins();
    const spec = zones([100, 100]);
    const built = (id: string) => registry.create(spec, { id, name: null });
    // ids of one length with the same two first and two last characters share a bucket
    const ids = ['ab-0-yz', 'ab-1-yz', 'ab-2-yz', 'ab-3-yz', 'x', ''];
    const cache = new PolicyCache(4);
    const policies = ids.map(built);
    ids.forEach((id, i) => cache.set(id, null, PolicyCache.copy(spec)!, policies[i]));
    ids.forEach((id, i) => expect(cache.get(id, null, spec)).toBe(i < 2 ? undefined : policies[i]));
    // set again under a kept id: replaced, and nothing else goes
    const again = built('ab-2-yz');
    cache.set('ab-2-yz', null, PolicyCache.copy(spec)!, again);
    expect(cache.get('ab-2-yz', null, spec)).toBe(again);
    ids.slice(3).forEach((id, i) => expect(cache.get(id, null, spec)).toBe(policies[i + 3]));
    expect(cache.get('ab-0-yz', null, spec)).toBeUndefined();
    expect(cache.get('ab-9-yz', null, spec)).toBeUndefined();
  });
});
