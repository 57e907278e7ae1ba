import fc from 'fast-check';
import { createZonePlan, shrinkShares, zoneDistribution } from './plan';

const zones = (spec: Array<[string, number]>) => spec.map(([name, weight]) => ({ name, weight }));
const counts = (spec: Record<string, number>) => new Map(Object.entries(spec));

describe('createZonePlan: the worked examples of senlin-behaviour §5.4', () => {
  it.each([
    [
      'weights 100/80/60/40, current 2/2/2/1, +7',
      zones([['AZ1', 100], ['AZ2', 80], ['AZ3', 60], ['AZ4', 40]]),
      { AZ1: 2, AZ2: 2, AZ3: 2, AZ4: 1 },
      7,
      true,
      { AZ1: 3, AZ2: 2, AZ3: 1, AZ4: 1 },
    ],
    ['equal weights, empty, +3', zones([['zone1', 100], ['zone2', 100]]), {}, 3, true, { zone1: 2, zone2: 1 }],
    ['equal weights listed the other way round', zones([['zone2', 100], ['zone1', 100]]), {}, 3, true, { zone2: 2, zone1: 1 }],
    ['weights 100/200, empty, +1', zones([['az_1', 100], ['az_2', 200]]), {}, 1, true, { az_2: 1 }],
    [
      'weights 100/80/60/40, current 4/5/1/1, -3',
      zones([['AZ1', 100], ['AZ2', 80], ['AZ3', 60], ['AZ4', 40]]),
      { AZ1: 4, AZ2: 5, AZ3: 1, AZ4: 1 },
      3,
      false,
      { AZ2: 3 },
    ],
    ['equal weights, 1+1 nodes, -1', zones([['zone1', 100], ['zone2', 100]]), { zone1: 1, zone2: 1 }, 1, false, { zone1: 1 }],
  ])('%s', (_name, z, current, n, expand, expected) => {
    const plan = createZonePlan(counts({ ...Object.fromEntries(z.map((x) => [x.name, 0])), ...current }), z, n, expand);
    expect(plan).toEqual(expected);
    expect(Object.keys(plan as object)).toEqual(Object.keys(expected));
  });

  it('has no plan when all weights are zero (Senlin divided by zero)', () => {
    expect(createZonePlan(counts({ a: 0 }), zones([['a', 0]]), 1, true)).toBeNull();
  });

  it('plans as senlin-behaviour §5.4 reads, by name, for any zones (repeated names included)', () => {
    // §5.4 as written: a stable sort by weight, the plan kept by name, the result in spec order
    const reference = (current: Map<string, number>, z: Array<{ name: string; weight: number }>, count: number, expand: boolean) => {
      const sum = z.reduce((t, x) => t + x.weight, 0);
      if (sum <= 0) return null;
      const total = z.reduce((t, x) => t + (current.get(x.name) ?? 0), 0) + (expand ? count : -count);
      const plan = new Map<string, number>();
      let remain = count;
      for (const x of [...z].sort((a, b) => (expand ? b.weight - a.weight : a.weight - b.weight))) {
        const q = (total * x.weight) / sum;
        const c = current.get(x.name) ?? 0;
        const headroom = expand ? Math.ceil(q) - c : c - Math.floor(q);
        if (headroom <= 0) continue;
        plan.set(x.name, Math.min(headroom, remain));
        remain -= Math.min(headroom, remain);
        if (remain === 0) break;
      }
      if (remain > 0) return null;
      const out: Record<string, number> = {};
      for (const x of z) if ((plan.get(x.name) ?? 0) > 0) out[x.name] = plan.get(x.name)!;
      return out;
    };
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', '7', '__proto__'), weight: fc.oneof(fc.constantFrom(0, 50, 100, 200), fc.integer({ min: 0, max: 300 })) }), { minLength: 1, maxLength: 12 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', '7'), fc.integer({ min: 0, max: 400 })),
        fc.integer({ min: 1, max: 500 }),
        fc.boolean(),
        (z, counts, count, expand) => {
          const current = new Map(Object.entries(counts));
          const plan = createZonePlan(current, z, count, expand);
          const expected = reference(current, z, count, expand);
          expect(plan).toEqual(expected);
          if (plan) expect(Object.keys(plan)).toEqual(Object.keys(expected!));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('lists the plan in spec order, not visiting order', () => {
    expect(Object.keys(createZonePlan(counts({ a: 0, b: 0 }), zones([['a', 1], ['b', 3]]), 4, true) as object)).toEqual(['a', 'b']);
  });
});

describe('zoneDistribution', () => {
  it('counts recorded zones, then the server zone, and ignores zones that are not usable (decision 12)', () => {
    const nodes = [
      { id: '1', data: { placement: { zone: 'az1' } } },
      { id: '2', data: { placement: { zone: 'nova:host1' } }, server: { availability_zone: 'az2' } },
      { id: '3', server: { availability_zone: 'az2' } },
      { id: '4', data: { placement: { zone: 'gone' } } },
      { id: '5' },
    ];
    expect(Object.fromEntries(zoneDistribution(nodes, ['az1', 'az2']))).toEqual({ az1: 1, az2: 1 });
  });
});

describe('createZonePlan properties', () => {
  const arbZones = fc
    .uniqueArray(fc.record({ name: fc.string({ minLength: 1, maxLength: 4 }), weight: fc.integer({ min: 1, max: 500 }) }), {
      minLength: 1,
      maxLength: 6,
      selector: (z) => z.name,
    });
  const arbCase = arbZones.chain((z) =>
    fc.record({
      zones: fc.constant(z),
      current: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: z.length, maxLength: z.length }),
      n: fc.integer({ min: 1, max: 60 }),
    }),
  );
  const currentMap = (z: { name: string }[], c: number[]) => new Map(z.map((x, i) => [x.name, c[i]]));

  it('expanding: feasible, exactly n nodes, never negative, only listed zones', () => {
    fc.assert(
      fc.property(arbCase, ({ zones: z, current, n }) => {
        const plan = createZonePlan(currentMap(z, current), z, n, true);
        expect(plan).not.toBeNull();
        const values = Object.values(plan as Record<string, number>);
        expect(values.every((v) => v > 0)).toBe(true);
        expect(values.reduce((a, b) => a + b, 0)).toBe(n);
        expect(Object.keys(plan as object).every((k) => z.some((x) => x.name === k))).toBe(true);
      }),
    );
  });

  it('shrinking: never removes more than a zone has nor more than requested', () => {
    fc.assert(
      fc.property(arbCase, ({ zones: z, current, n }) => {
        const total = current.reduce((a, b) => a + b, 0);
        fc.pre(total > 0);
        const take = Math.min(n, total);
        const cur = currentMap(z, current);
        const plan = createZonePlan(cur, z, take, false);
        if (plan === null) return;
        const values = Object.values(plan);
        expect(values.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(take);
        for (const [zone, k] of Object.entries(plan)) {
          expect(k).toBeGreaterThan(0);
          expect(k).toBeLessThanOrEqual(cur.get(zone) as number);
        }
      }),
    );
  });

  it('keeps the spec order on ties: with equal weights the earlier zone gets the extra node', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 1, max: 30 }), (k, n) => {
        const z = Array.from({ length: k }, (_, i) => ({ name: `z${i}`, weight: 100 }));
        const plan = createZonePlan(new Map(z.map((x) => [x.name, 0])), z, n, true) as Record<string, number>;
        const got = z.map((x) => plan[x.name] ?? 0);
        for (let i = 1; i < got.length; i++) expect(got[i - 1]).toBeGreaterThanOrEqual(got[i]);
      }),
    );
  });

  it('repeated scale-outs converge to the weights (each zone within one node of its share)', () => {
    fc.assert(
      fc.property(arbZones, fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 15 }), (z, steps) => {
        const cur = new Map(z.map((x) => [x.name, 0]));
        const sum = z.reduce((a, x) => a + x.weight, 0);
        let total = 0;
        for (const n of steps) {
          const plan = createZonePlan(cur, z, n, true) as Record<string, number>;
          for (const [zone, k] of Object.entries(plan)) cur.set(zone, (cur.get(zone) as number) + k);
          total += n;
          for (const x of z) {
            expect(cur.get(x.name) as number).toBeLessThanOrEqual(Math.ceil((total * x.weight) / sum));
          }
        }
      }),
    );
  });
});

describe('shrinkShares', () => {
  it('bounds what createZonePlan takes from each zone, for every smaller scale-in', () => {
    let below = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e'), weight: fc.integer({ min: 1, max: 300 }), nodes: fc.integer({ min: 0, max: 400 }) }), { selector: (z) => z.name, minLength: 1 }),
        fc.integer({ min: 1, max: 500 }),
        (zones, most) => {
          const current = new Map(zones.map((z) => [z.name, z.nodes]));
          const shares = shrinkShares(current, zones, most);
          expect([...shares.keys()]).toEqual(zones.map((z) => z.name));
          const taken = new Map<string, number>(zones.map((z) => [z.name, 0]));
          for (let n = 1; n <= most; n++) {
            for (const [zone, q] of Object.entries(createZonePlan(current, zones, n, false) ?? {})) taken.set(zone, Math.max(taken.get(zone)!, q));
          }
          for (const z of zones) {
            expect(shares.get(z.name)).toBeGreaterThanOrEqual(taken.get(z.name)!);
            expect(shares.get(z.name)).toBeLessThanOrEqual(most);
            if (shares.get(z.name)! < Math.min(most, z.nodes)) below++;
          }
        },
      ),
      { numRuns: 300 },
    );
    // the shares must be tighter than "a zone gives what it has" often, or they save nothing
    expect(below).toBeGreaterThan(100);
  });

  it('gives each zone of an uneven cluster its own share', () => {
    // 1,000 nodes over weights 100/100/50, a scale-in by 100: az1 and az2 are 60 above their quota, az3 below
    const z = zones([['az1', 100], ['az2', 100], ['az3', 50]]);
    const shares = shrinkShares(counts({ az1: 420, az2: 420, az3: 160 }), z, 100);
    const plan = createZonePlan(counts({ az1: 420, az2: 420, az3: 160 }), z, 100, false)!;
    expect(plan).toEqual({ az1: 60, az2: 40 });
    expect(Object.fromEntries(shares)).toEqual({ az1: 60, az2: 60, az3: 0 });
    expect(Object.fromEntries(shrinkShares(counts({ az1: 3 }), z, 0))).toEqual({ az1: 0, az2: 0, az3: 0 });
  });
});
