import fc from 'fast-check';
import { createZonePlan, zoneDistribution } from './plan';

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
