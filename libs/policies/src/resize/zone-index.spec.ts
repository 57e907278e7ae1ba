import fc from 'fast-check';
import { NodeSnapshot } from '../framework/types';
import { ZoneIndex } from './zone-index';

/** The plain per-node reads the index stands in for, as HEAD wrote them. */
function referenceZone(node: NodeSnapshot): string | undefined {
  const recorded = node.data?.placement?.zone;
  if (typeof recorded === 'string') return recorded;
  const reported = node.server?.availability_zone;
  return typeof reported === 'string' ? reported : undefined;
}
function referenceCounts(nodes: readonly NodeSnapshot[], usable: readonly string[]): Map<string, number> {
  const result = new Map<string, number>(usable.map((z) => [z, 0]));
  for (const node of nodes) {
    const zone = referenceZone(node);
    if (zone !== undefined && result.has(zone)) result.set(zone, (result.get(zone) as number) + 1);
  }
  return result;
}
function referenceNodesIn(nodes: readonly NodeSnapshot[], zones: readonly string[]): Map<string, NodeSnapshot[]> {
  return new Map(zones.map((z) => [z, nodes.filter((n) => referenceZone(n) === z)]));
}

const zoneName = fc.oneof(fc.constantFrom('az1', 'az2', 'az3', 'nova', 'a-long-zone-name-not-internalised'), fc.string({ maxLength: 3 }));
const oddZone = fc.oneof(zoneName, fc.constantFrom(null, undefined, 0, 7, true, { name: 'az1' }, ['az1']));
export const nodeArb: fc.Arbitrary<NodeSnapshot> = fc.record(
  {
    id: fc.oneof(fc.constantFrom('n1', 'n2', 'n3'), fc.uuid()),
    data: fc.oneof(
      fc.constantFrom(null, undefined, 0, 'x'),
      fc.record({ placement: fc.oneof(fc.constantFrom(null, undefined, 5), fc.record({ zone: oddZone }, { requiredKeys: [] })) }, { requiredKeys: [] }),
    ),
    server: fc.oneof(fc.constantFrom(null, undefined), fc.record({ availability_zone: oddZone }, { requiredKeys: [] })),
  },
  { requiredKeys: ['id'] },
) as fc.Arbitrary<NodeSnapshot>;

describe('ZoneIndex', () => {
  // many distinct zones, so that the index switches from a scan to a Map
  const many = fc.array(fc.integer({ min: 0, max: 30 }).map((i) => ({ id: `n${i}`, data: { placement: { zone: `z${i % 13}` } } }) as NodeSnapshot));
  const nodes = fc.oneof(fc.array(nodeArb, { maxLength: 40 }), many);

  it('reads every node\'s zone as nodeZone does', () => {
    fc.assert(
      fc.property(nodes, (list) => {
        const index = ZoneIndex.build(list) as ZoneIndex;
        list.forEach((n, i) => expect(index.zoneOf(i)).toBe(referenceZone(n)));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts the nodes of the usable zones as zoneDistribution does, and refuses a list naming a zone twice', () => {
    fc.assert(
      fc.property(nodes, fc.array(fc.oneof(zoneName, fc.constantFrom('z1', 'z12')), { maxLength: 5 }), (list, usable) => {
        const counts = (ZoneIndex.build(list) as ZoneIndex).counts(usable);
        if (new Set(usable).size !== usable.length) expect(counts).toBeNull();
        else expect([...(counts as Map<string, number>)]).toEqual([...referenceCounts(list, usable)]);
      }),
      { numRuns: 2000 },
    );
  });

  it('lists the nodes of each zone in cluster order as nodesInZones does', () => {
    fc.assert(
      fc.property(nodes, fc.uniqueArray(fc.oneof(zoneName, fc.constantFrom('z1', 'z12')), { maxLength: 5 }), (list, zones) => {
        const byZone = (ZoneIndex.build(list) as ZoneIndex).nodesIn(zones) as Map<string, NodeSnapshot[]>;
        const expected = referenceNodesIn(list, zones);
        expect([...byZone.keys()]).toEqual([...expected.keys()]);
        for (const [zone, members] of expected) {
          const got = byZone.get(zone) as NodeSnapshot[];
          expect(got.length).toBe(members.length);
          members.forEach((m, i) => expect(got[i]).toBe(m));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('is not built over a null node, so that the plain reads fail as they always did', () => {
    expect(ZoneIndex.build([{ id: 'a' }, null as unknown as NodeSnapshot])).toBeNull();
    expect(ZoneIndex.build([undefined as unknown as NodeSnapshot])).toBeNull();
  });
});
