import fc from 'fast-check';
import { EvaluationInput, EvaluationInputError, evaluate } from '../evaluate';
import { timestampMillis } from '../resize/victims';
import { HookContext, Policy, PolicyClass, PolicyType } from './policy';
import { PolicyRegistry } from './registry';
import { IncompleteSnapshotError, VictimListing, summariseNodes, victimListing } from './summary';
import { NodeSnapshot, VictimOrder } from './types';
import { clusterAction, deletionPolicy, isoTime, placementData, policy, policyChains, preOpSnapshot, server, zone, zonePlacementPolicy } from '../testing/arbitraries';

/**
 * A summarised cluster (counts per zone, only the candidate nodes listed) must give the decision the
 * whole node list gives, byte for byte, or say it cannot (IncompleteSnapshotError) so that the
 * caller loads every node. Never a different decision.
 */

function outcome(fn: () => unknown): string {
  try {
    return JSON.stringify(fn());
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

function summarised(input: EvaluationInput, listed: number | VictimListing, orders: VictimOrder[] = ['oldest', 'youngest', 'profile']): EvaluationInput {
  const copy = JSON.parse(JSON.stringify(input)) as EvaluationInput;
  const listing = typeof listed === 'number' ? { listed, orders } : listed;
  // through JSON, as a stored snapshot is read back
  const { nodes, summary } = JSON.parse(JSON.stringify(summariseNodes(copy.cluster!.nodes ?? [], listing, timestampMillis)));
  copy.cluster = { ...copy.cluster, nodes, summary };
  return copy;
}

const time = fc.oneof(
  isoTime,
  // few distinct times: ties, broken by cluster order
  fc.constantFrom('2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2023-06-01T00:00:00.000Z'),
  fc.constantFrom(null, '2024-01-01T00:00:00Z'),
);
const node = fc.record({
  status: fc.constantFrom('ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE', 'ERROR', 'WARNING', 'CREATING'),
  tainted: fc.constantFrom(false, false, false, false, true),
  created_at: time,
  profile_created_at: time,
  data: fc.oneof(fc.constant({}), placementData),
  server,
});
const zonePolicy = zonePlacementPolicy(fc.constant('1.0'), fc.record({ name: zone, weight: fc.integer({ min: 1, max: 200 }) }));
const deletion = deletionPolicy(fc.record({ criteria: fc.constantFrom('OLDEST_FIRST', 'YOUNGEST_FIRST', 'OLDEST_PROFILE_FIRST', 'RANDOM') }));
const scalingPolicy = policy(
  'senlin.policy.scaling',
  fc.constant('1.0'),
  fc.record({
    event: fc.constantFrom('CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT'),
    adjustment: fc.record({ type: fc.constantFrom('CHANGE_IN_CAPACITY', 'CHANGE_IN_PERCENTAGE', 'EXACT_CAPACITY'), number: fc.integer({ min: 1, max: 40 }), best_effort: fc.boolean() }),
  }),
);
const snapshot = preOpSnapshot({
  // ids are unique, as in the database the summary is read from
  nodes: fc.array(node, { maxLength: 80 }).map((nodes) => nodes.map((n, i) => ({ ...n, id: `n${i + 1}` }))),
  policies: policyChains([zonePolicy], [zonePolicy, deletion], [scalingPolicy, zonePolicy, deletion], [deletion], [scalingPolicy]),
  action: clusterAction(fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constantFrom('3', null))),
});

describe('a summarised cluster decides as the whole node list does', () => {
  const registry = PolicyRegistry.withBuiltins();

  it('gives the same output, or says it lists too few nodes, on random snapshots', () => {
    let decided = 0;
    fc.assert(
      fc.property(snapshot, fc.integer({ min: 0, max: 12 }), fc.subarray(['oldest', 'youngest', 'profile'] as VictimOrder[]), (input, listed, orders) => {
        const whole = outcome(() => evaluate(JSON.parse(JSON.stringify(input)), { registry }));
        const part = outcome(() => evaluate(summarised(input, listed, orders), { registry }));
        if (part.startsWith('IncompleteSnapshotError')) return;
        decided++;
        expect(part).toBe(whole);
      }),
      { numRuns: 3000 },
    );
    // most random snapshots must be decided on their summary, or the property proves little
    expect(decided).toBeGreaterThan(1500);
  });

  it('ends the AFTER chain the same on a summary that lists only the bad nodes: no built-in post_op reads a node', () => {
    const affinity = policy('senlin.policy.affinity', fc.constant('1.0'), fc.record({ servergroup: fc.constant({ policies: 'anti-affinity' }) }));
    const afterwards = preOpSnapshot({
      nodes: fc.array(node, { maxLength: 40 }).map((nodes) => nodes.map((n, i) => ({ ...n, id: `n${i + 1}` }))),
      policies: policyChains([scalingPolicy, zonePolicy, deletion], [scalingPolicy, affinity], [scalingPolicy, scalingPolicy, zonePolicy, deletion, affinity], [zonePolicy]),
      action: clusterAction(fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(null))),
    }).map((input): EvaluationInput => ({ ...input, hook: 'post_op' }));
    let stamped = 0;
    fc.assert(
      fc.property(afterwards, (input) => {
        const whole = outcome(() => evaluate(JSON.parse(JSON.stringify(input)), { registry }));
        const part = outcome(() => evaluate(summarised(input, 0, []), { registry }));
        expect(part).toBe(whole);
        if (whole.includes('"last_op"')) stamped++;
      }),
      { numRuns: 1500 },
    );
    // the scaling policy's post_op ran (and stamped its binding) in many of them
    expect(stamped).toBeGreaterThan(150);
  });

  it('refuses a summary for attach and detach, and for a post_op beside a plugin policy', () => {
    @PolicyType({ name: 'x.policy.counts_after', versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2025.01' }] }, profileTypes: ['ANY'], targets: [['AFTER', 'CLUSTER_SCALE_OUT']], priority: 500, hooks: ['post_op'], properties: {} })
    class CountsAfter extends Policy {
      override postOp(ctx: HookContext): string {
        return `${ctx.cluster.nodes.length} nodes`;
      }
    }
    const withPlugin = PolicyRegistry.withBuiltins().register(CountsAfter as unknown as PolicyClass);
    const nodes = Array.from({ length: 4 }, (_, i) => ({ id: `n${i + 1}`, status: 'ACTIVE', created_at: '2024-01-01T00:00:00.000Z', data: { placement: { zone: 'az1' } } }));
    const input = (hook: EvaluationInput['hook']): EvaluationInput => ({
      hook,
      policies: [{ id: 'p1', spec: { type: 'x.policy.counts_after', version: '1.0', properties: {} } }],
      cluster: { id: 'c1', nodes },
      cloud: { availability_zones: [{ zoneName: 'az1' }], server_groups: [] },
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } },
      now: '2026-01-01T00:00:00.000Z',
    });
    expect(evaluate(input('post_op'), { registry: withPlugin }).trace[0].reason).toBe('4 nodes');
    expect(() => evaluate(summarised(input('post_op'), 0, []), { registry: withPlugin })).toThrow(IncompleteSnapshotError);
    for (const hook of ['attach', 'detach'] as const) expect(() => evaluate(summarised(input(hook), 0, []), { registry: withPlugin })).toThrow(IncompleteSnapshotError);
  });

  it('decides on the summary when the listed nodes are enough, and refuses a random pick', () => {
    const nodes = Array.from({ length: 40 }, (_, i) => ({
      id: `n${i + 1}`,
      status: 'ACTIVE',
      created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
      data: { placement: { zone: i % 2 ? 'az1' : 'az2' } },
    }));
    const base = (criteria: string, count: number): EvaluationInput => ({
      policies: [
        { spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1' }, { name: 'az2' }] } } },
        { spec: { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria } } },
      ],
      cluster: { id: 'c1', nodes },
      cloud: { availability_zones: [{ zoneName: 'az1' }, { zoneName: 'az2' }] },
      action: { action: 'CLUSTER_SCALE_IN', inputs: { count } },
      now: '2026-01-01T00:00:00.000Z',
    });
    const oldest = summarised(base('OLDEST_FIRST', 6), 3, ['oldest']);
    expect(oldest.cluster!.nodes!.length).toBeLessThan(40);
    expect(JSON.stringify(evaluate(oldest, { registry }))).toBe(JSON.stringify(evaluate(base('OLDEST_FIRST', 6), { registry })));
    expect(() => evaluate(summarised(base('OLDEST_FIRST', 8), 3, ['oldest']), { registry })).toThrow(IncompleteSnapshotError);
    expect(() => evaluate(summarised(base('OLDEST_FIRST', 6), 3, ['youngest']), { registry })).toThrow(IncompleteSnapshotError);
    expect(() => evaluate(summarised(base('RANDOM', 2), 3), { registry })).toThrow(IncompleteSnapshotError);
  });

  it('lists per zone only what the zone plan can take, and decides as when it listed the whole count', () => {
    let fewer = 0;
    let unzonedLeftOut = 0;
    fc.assert(
      // bindings in their types' order, or reordered or disabled as a binding may be
      fc.property(snapshot, fc.array(fc.constantFrom(undefined, undefined, undefined, 50, 250, 350, 450, 'off'), { minLength: 3, maxLength: 3 }), (generated, bindings) => {
        const input: EvaluationInput = {
          ...generated,
          policies: generated.policies!.map((p, i) => (bindings[i] === undefined ? p : bindings[i] === 'off' ? { ...p, enabled: false } : { ...p, priority: bindings[i] as number })),
        };
        const nodes = input.cluster!.nodes!;
        const cluster = { min_size: 0, max_size: -1, desired_capacity: nodes.length };
        const a = { action: input.action!.action!, inputs: input.action!.inputs ?? {} };
        const zones = summariseNodes(nodes, { listed: 0, orders: [] }, timestampMillis).summary.zones;
        const count = victimListing(a, input.policies!, cluster, nodes.length);
        const share = victimListing(a, input.policies!, cluster, nodes.length, { zones, cloud: input.cloud });
        if (!count || !share) return expect(share).toEqual(count);
        expect(share.orders).toEqual(count.orders);
        expect(count.zones).toBeUndefined();
        expect(share.listed).toBeLessThanOrEqual(count.listed);
        const depths = share.zones ? [...share.zones.values()] : [share.listed];
        for (const d of depths) expect(d).toBeLessThanOrEqual(count.listed);
        if (depths.some((d) => d < count.listed)) fewer++;
        const before = summarised(input, count);
        const after = summarised(input, share);
        const kept = new Set(after.cluster!.nodes!.map((n) => n.id));
        const zoneless = (n: NodeSnapshot) => typeof n.data?.placement?.zone !== 'string' && typeof n.server?.availability_zone !== 'string';
        if (before.cluster!.nodes!.some((n) => zoneless(n) && !kept.has(n.id))) unzonedLeftOut++;
        // fewer nodes listed never sends a decision to the whole list that its count did not
        const decided = outcome(() => evaluate(after, { registry }));
        expect(decided).toBe(outcome(() => evaluate(before, { registry })));
        if (!decided.startsWith('IncompleteSnapshotError')) expect(decided).toBe(outcome(() => evaluate(JSON.parse(JSON.stringify(input)), { registry })));
      }),
      { numRuns: 3000 },
    );
    expect(fewer).toBeGreaterThan(30);
    expect(unzonedLeftOut).toBeGreaterThan(10);
  });

  it('lists the whole count when the victims may not follow the zone plan', () => {
    const nodes = Array.from({ length: 40 }, (_, i) => ({ id: `n${i + 1}`, data: { placement: { zone: i % 2 ? 'az1' : 'az2' } } }));
    const zones = summariseNodes(nodes, { listed: 0, orders: [] }, timestampMillis).summary.zones;
    const cloud = { availability_zones: [{ zoneName: 'az1' }, { zoneName: 'az2' }] };
    const zone = { spec: { type: 'senlin.policy.zone_placement', properties: { zones: [{ name: 'az1' }, { name: 'az2' }] } } };
    const deletion = { spec: { type: 'senlin.policy.deletion', properties: { criteria: 'OLDEST_FIRST' } } };
    const scaling = { spec: { type: 'senlin.policy.scaling', properties: { event: 'CLUSTER_SCALE_IN', adjustment: { number: 10 } } } };
    const listed = (policies: Array<{ spec: unknown; enabled?: boolean; priority?: number }>, facts: unknown = cloud) => {
      const listing = victimListing({ action: 'CLUSTER_SCALE_IN', inputs: { count: 8 } }, policies, { min_size: 0, max_size: -1, desired_capacity: 40 }, 40, {
        zones,
        cloud: facts as typeof cloud,
      });
      return listing?.zones ? { ...Object.fromEntries(listing.zones), without: listing.listed } : listing?.listed;
    };
    // 20 + 20 nodes, 8 to delete: 4 from each zone, none of the nodes without a zone
    expect(listed([zone, deletion])).toEqual({ az1: 4, az2: 4, without: 0 });
    expect(listed([scaling, zone])).toEqual({ az1: 5, az2: 5, without: 0 });
    expect(listed([deletion])).toBe(8);
    expect(listed([{ ...zone, enabled: false }, deletion])).toBe(8);
    expect(listed([zone, zone, deletion])).toBe(8);
    expect(listed([zone, { ...deletion, priority: 200 }])).toBe(8);
    expect(listed([{ ...scaling, priority: 350 }, zone])).toBe(10);
    expect(listed([zone, deletion], {})).toBe(8);
    expect(listed([{ spec: { ...zone.spec, properties: { zones: [{ name: 'az1', weight: '50' }, { name: 'az2' }] } } }])).toBe(8);
    // only az1 available: the plan takes all 8 from it, none from az2
    expect(listed([zone, deletion], { availability_zones: ['az1'] })).toEqual({ az1: 8, az2: 0, without: 0 });
  });

  it('names the field of a malformed summary', () => {
    const input = (summary: unknown) =>
      ({ cluster: { nodes: [], summary }, action: { action: 'CLUSTER_SCALE_OUT' }, now: '2026-01-01T00:00:00.000Z' }) as unknown as EvaluationInput;
    expect(() => evaluate(input({ node_count: -1, active_count: 0, listed: 0, zones: [], orders: [] }))).toThrow(new EvaluationInputError('cluster.summary.node_count', 'must be a non-negative integer'));
    expect(() => evaluate(input({ node_count: 1, active_count: 0, listed: 0, zones: [{ name: 'az1', nodes: 2, active: 0 }], orders: [] }))).toThrow(/cluster.summary.zones/);
    expect(() => evaluate(input({ node_count: 1, active_count: 0, listed: 0, zones: [{ name: 3, nodes: 1, active: 0 }], orders: [] }))).toThrow(/cluster.summary.zones\[0\].name/);
    expect(() => evaluate(input({ node_count: 1, active_count: 0, listed: 0, zones: [{ name: 'az1', nodes: 1, active: 0, listed: -2 }], orders: [] }))).toThrow(
      new EvaluationInputError('cluster.summary.zones[0].listed', 'must be a non-negative integer'),
    );
    const grouped = (groups: unknown) => input({ node_count: 2, active_count: 0, listed: 0, zones: [], orders: [], groups });
    expect(() => evaluate(grouped({ g1: 1 }))).toThrow(new EvaluationInputError('cluster.summary.groups', 'must be a list'));
    expect(() => evaluate(grouped([{ id: 7, nodes: 1 }]))).toThrow(new EvaluationInputError('cluster.summary.groups[0].id', 'must be a string'));
    expect(() => evaluate(grouped([{ id: 'g1', nodes: 1.5 }]))).toThrow(new EvaluationInputError('cluster.summary.groups[0].nodes', 'must be a non-negative integer'));
    expect(() => evaluate(grouped([{ id: 'g1', nodes: 2 }, { id: 'g2', nodes: 1 }]))).toThrow(new EvaluationInputError('cluster.summary.groups', 'count 3 nodes, more than node_count 2'));
    expect(() => evaluate(grouped([{ id: 'g1', nodes: 1 }, { id: 'g1', nodes: 1 }]))).toThrow(new EvaluationInputError('cluster.summary.groups', 'name a server group twice'));
    expect(evaluate(grouped([{ id: 'g1', nodes: 2 }])).status).toBe('OK');
  });
});
