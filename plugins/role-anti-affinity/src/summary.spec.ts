import * as path from 'path';
import fc from 'fast-check';
import { EvaluationInput, IncompleteSnapshotError, PolicyRegistry, evaluate, groupCounts, summariseNodes, timestampMillis, victimListing } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';

/**
 * The plugin declares `summarised: true`: on a summarised cluster (counts per zone and per server
 * group, only the bad nodes listed, as the engine's loader reads a scale-out) it must decide exactly
 * as on every node, or say it cannot (IncompleteSnapshotError), never otherwise.
 */
const registry = PolicyRegistry.withBuiltins();
loadPolicyPlugins(registry, [path.resolve(__dirname, '../index.ts')]);

const TYPE = 'trellis.policy.role_anti_affinity';
const GROUPS = ['g1', 'g2', 'g3'];

const outcome = (fn: () => unknown): string => {
  try {
    return JSON.stringify(fn());
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
};

/**
 * The input with its nodes summarised as the loader does for a plugin-bound cluster: the victims a
 * scale-in or resize may pick listed (victimListing), groups counted.
 */
function summarised(input: EvaluationInput, withGroups = true): EvaluationInput {
  const copy = JSON.parse(JSON.stringify(input)) as EvaluationInput;
  // the groups without their members, as the loader lists them for types that say they never read them
  if (copy.cloud) copy.cloud.server_groups = (copy.cloud.server_groups ?? []).map(({ members: _, ...g }) => g);
  const all = copy.cluster!.nodes ?? [];
  const zones = summariseNodes(all, { listed: 0, orders: [] }, timestampMillis).summary.zones;
  const sizes = { min_size: copy.cluster!.min_size ?? 0, max_size: copy.cluster!.max_size ?? -1, desired_capacity: all.length };
  const action = { action: copy.action!.action ?? '', inputs: copy.action!.inputs ?? {} };
  const listing = victimListing(action, (copy.policies ?? []) as never, sizes, all.length, { zones, cloud: copy.cloud });
  if (!listing) return copy;
  const { nodes, summary } = JSON.parse(JSON.stringify(summariseNodes(all, listing, timestampMillis)));
  if (withGroups) summary.groups = groupCounts(all);
  copy.cluster = { ...copy.cluster, nodes, summary };
  return copy;
}

const node = fc.record({
  status: fc.constantFrom('ACTIVE', 'ACTIVE', 'ACTIVE', 'ERROR', 'CREATING'),
  created_at: fc.constantFrom('2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z', null),
  data: fc.oneof(
    fc.constant({}),
    fc.record({ placement: fc.record({ zone: fc.constantFrom('az1', 'az2'), servergroup: fc.constantFrom('g1', 'g2', 'g3', 'gone', 7, null) }, { requiredKeys: [] }) }),
    fc.constant({ placement: 'not an object' }),
  ),
  metadata: fc.oneof(fc.constant({}), fc.record({ roles: fc.constantFrom('db', 'web', 'db,web', '') })),
});

const input = fc
  .record({
    nodes: fc.array(node, { maxLength: 40 }).map((nodes) => nodes.map((n, i) => ({ ...n, id: `n${i + 1}`, name: `node-${i + 1}` }))),
    ratio: fc.integer({ min: 1, max: 3 }),
    profileRoles: fc.constantFrom('db', 'web', undefined),
    withZones: fc.boolean(),
    deletion: fc.constantFrom(null, 'OLDEST_FIRST', 'YOUNGEST_FIRST', 'OLDEST_PROFILE_FIRST'),
    action: fc.oneof(
      fc.record({ action: fc.constant('CLUSTER_SCALE_IN'), inputs: fc.record({ count: fc.integer({ min: 1, max: 8 }) }, { requiredKeys: [] }) }),
      fc.record({ action: fc.constant('CLUSTER_SCALE_OUT'), inputs: fc.record({ count: fc.integer({ min: 1, max: 12 }) }, { requiredKeys: [] }) }),
      fc.record({
        action: fc.constant('CLUSTER_RESIZE'),
        inputs: fc.record({ adjustment_type: fc.constantFrom('CHANGE_IN_CAPACITY', 'EXACT_CAPACITY', 'CHANGE_IN_PERCENTAGE'), number: fc.integer({ min: -10, max: 50 }) }),
      }),
      fc.record({ action: fc.constant('NODE_CREATE'), target: fc.constantFrom('n1', 'n2', 'n-new'), inputs: fc.constant({}) }),
    ),
  })
  .map(
    ({ nodes, ratio, profileRoles, withZones, deletion, action }): EvaluationInput => ({
      hook: 'pre_op',
      policies: [
        ...(withZones ? [{ id: 'p-z', name: 'zones', spec: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1' }, { name: 'az2' }] } } }] : []),
        ...(deletion ? [{ id: 'p-d', name: 'del', spec: { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: deletion } } }] : []),
        {
          id: 'p-raa',
          name: 'raa',
          spec: { type: TYPE, version: '1.0', properties: { roles: ['db'], ratio } },
          binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: GROUPS.slice(0, ratio).map((id, i) => ({ id, name: `web-aa-${i + 1}`, created: true })) } } },
        },
      ],
      cluster: {
        id: 'c1',
        name: 'web',
        min_size: 0,
        max_size: -1,
        profile: { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: profileRoles ? { metadata: { roles: profileRoles } } : {} } },
        nodes: nodes as never,
      },
      // Nova's groups with their members (the nodes that recorded them); the summary lists them without
      cloud: {
        availability_zones: [{ zoneName: 'az1' }, { zoneName: 'az2' }],
        server_groups: GROUPS.map((id, i) => ({
          id,
          name: `web-aa-${i + 1}`,
          policy: 'anti-affinity',
          members: nodes.filter((n) => (n.data as { placement?: { servergroup?: unknown } }).placement?.servergroup === id).map((n) => `srv-${n.id}`),
        })),
      },
      action,
      now: '2026-12-06T12:00:00.000Z',
      seed: 3,
    }),
  );

describe('role anti-affinity on a summarised cluster', () => {
  it('declares it, and the registry lists it among the types that decide on a summary', () => {
    expect(registry.get(`${TYPE}-1.0`).meta.summarised).toBe(true);
    expect(registry.summarisedTypes()).toContain(TYPE);
  });

  it('decides as on every node, or says it cannot, on random clusters', () => {
    let decided = 0;
    let grouped = 0;
    let victims = 0;
    fc.assert(
      fc.property(input, (i) => {
        const whole = outcome(() => evaluate(JSON.parse(JSON.stringify(i)), { registry }));
        const part = outcome(() => evaluate(summarised(i), { registry }));
        if (part.startsWith('IncompleteSnapshotError')) return;
        decided++;
        if (whole.includes('"servergroup":"g')) grouped++;
        if (i.action!.action === 'CLUSTER_SCALE_IN' && whole.includes('"candidates":["n')) victims++;
        expect(part).toBe(whole);
      }),
      { numRuns: 2500 },
    );
    // most are decided on the summary (a NODE_CREATE of a node not listed is not), many placing nodes into groups
    expect(decided).toBeGreaterThan(1000);
    expect(grouped).toBeGreaterThan(300);
    // and scale-ins whose victims were picked from the listed nodes
    expect(victims).toBeGreaterThan(100);
  });

  it('asks for every node when the summary does not count the groups', () => {
    const nodes = [{ id: 'n1', status: 'ACTIVE', created_at: '2024-01-01T00:00:00.000Z', data: { placement: { servergroup: 'g1' } } }];
    const one: EvaluationInput = {
      policies: [
        {
          id: 'p-raa',
          spec: { type: TYPE, version: '1.0', properties: { roles: ['db'], ratio: 2 } },
          binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{ id: 'g1', name: 'a', created: true }, { id: 'g2', name: 'b', created: true }] } } },
        },
      ],
      cluster: { id: 'c1', name: 'web', profile: { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: { metadata: { roles: 'db' } } } }, nodes },
      cloud: { availability_zones: [], server_groups: [] },
      action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } },
      now: '2026-12-06T12:00:00.000Z',
    };
    expect(() => evaluate(summarised(one, false), { registry })).toThrow(IncompleteSnapshotError);
    // with the counts: the new node goes to the emptier group, as on the whole list
    const placed = evaluate(summarised(one), { registry }).data.placement as { placements: Array<{ servergroup: string }> };
    expect(placed.placements).toEqual([{ servergroup: 'g2' }]);
    expect(JSON.stringify(evaluate(summarised(one), { registry }))).toBe(JSON.stringify(evaluate(one, { registry })));
  });
});
