import fc from 'fast-check';
import type { EvaluationInput } from '../evaluate';
import type { NodeSnapshot } from '../framework/types';
import { TEST_NOW } from './fixed-time';

/**
 * The pieces of the random snapshots that property tests hand to evaluate() (evaluate.fast-path.spec.ts,
 * framework/summary.spec.ts). What every such test draws the same way is here; what a test varies
 * (how odd its values get, which policies it chains, how many nodes) stays in the test, which
 * composes its snapshot from these.
 */

export const zone = fc.constantFrom('az1', 'az2', 'az3', 'az9', 'internal');

/** an ISO 8601 time between 2020 and 2026 */
export const isoTime = fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2026-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

/** a node's `data` with a placement, or none, its zone a zone, null or missing */
export const placementData = fc.record({ placement: fc.oneof(fc.constant(null), fc.record({ zone: fc.oneof(zone, fc.constant(null)) }, { requiredKeys: [] })) }, { requiredKeys: [] });

/** a node's `server`: none, or one with or without an availability zone */
export const server = fc.oneof(fc.constant(null), fc.record({ availability_zone: zone }, { requiredKeys: [] }));

/** a binding of a policy of this type: `{ spec: { type, version, properties } }` */
export function policy<P>(type: string, version: fc.Arbitrary<string | number>, properties: fc.Arbitrary<P>) {
  return fc.record({ spec: fc.record({ type: fc.constant(type), version, properties }) });
}

/** a zone placement policy over one to four distinct zones, each drawn as `entry` draws it */
export function zonePlacementPolicy(version: fc.Arbitrary<string | number>, entry: fc.Arbitrary<{ name: string }>) {
  return policy('senlin.policy.zone_placement', version, fc.record({ zones: fc.uniqueArray(entry, { selector: (z) => z.name, minLength: 1, maxLength: 4 }) }));
}

/** a deletion policy, version 1.0 or 1.1 */
export function deletionPolicy<P>(properties: fc.Arbitrary<P>) {
  return policy('senlin.policy.deletion', fc.constantFrom('1.0', '1.1'), properties);
}

/** one of these chains of policies (each in its order), or no policy at all */
export function policyChains(...chains: Array<Array<fc.Arbitrary<unknown>>>): fc.Arbitrary<unknown[]> {
  return fc.oneof(...chains.map((chain) => fc.tuple(...chain).map((p): unknown[] => [...p])), fc.constant<unknown[]>([]));
}

/** a scale-in or scale-out of `count` (or none), a resize, a deletion of nodes by id, or one of `more` */
export function clusterAction(count: fc.Arbitrary<unknown>, ...more: Array<fc.Arbitrary<unknown>>) {
  return fc.oneof(
    fc.record({ action: fc.constantFrom('CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT'), inputs: fc.record({ count }, { requiredKeys: [] }) }),
    fc.record({
      action: fc.constant('CLUSTER_RESIZE'),
      inputs: fc.record({ adjustment_type: fc.constantFrom('CHANGE_IN_CAPACITY', 'CHANGE_IN_PERCENTAGE', 'EXACT_CAPACITY'), number: fc.integer({ min: -30, max: 30 }), strict: fc.boolean() }),
    }),
    fc.record({ action: fc.constant('CLUSTER_DEL_NODES'), inputs: fc.record({ candidates: fc.array(fc.constantFrom('n1', 'n2', 'n9'), { maxLength: 3 }) }) }),
    ...more,
  );
}

/**
 * A pre_op snapshot of cluster c1 with these nodes, policies and action, decided at TEST_NOW with a
 * random seed, on a cloud of zones az1 to az3 and az9, which is down.
 */
export function preOpSnapshot(parts: { nodes: fc.Arbitrary<unknown[]>; policies: fc.Arbitrary<unknown[]>; action: fc.Arbitrary<unknown> }): fc.Arbitrary<EvaluationInput> {
  return fc.record({ nodes: parts.nodes, policies: parts.policies, action: parts.action, seed: fc.integer({ min: 0, max: 1000 }) }).map(
    ({ nodes, policies, action, seed }): EvaluationInput => ({
      hook: 'pre_op',
      policies: policies as EvaluationInput['policies'],
      cluster: { id: 'c1', min_size: 0, max_size: -1, profile: { type: 'os.nova.server-1.0', spec: {} }, nodes: nodes as NodeSnapshot[] },
      cloud: { availability_zones: [{ zoneName: 'az1' }, { zoneName: 'az2' }, { zoneName: 'az3' }, { zoneName: 'az9', zoneState: { available: false } }] },
      action: action as EvaluationInput['action'],
      now: TEST_NOW,
      seed,
    }),
  );
}
