import fc from 'fast-check';
import { calculateDesired, checkResizeRequest, checkScaleRequest, checkSizeParams, parseResizeParams, truncateDesired } from './resize';
import { filterErrorNodes, nodesByAge, nodesByProfileAge, nodesByRandom, parseTimestamp, timestampMillis } from './victims';
import { seededRandom } from '../framework/random';

describe('calculateDesired (§3.1, decision 15)', () => {
  it.each([
    ['EXACT_CAPACITY', 5, 3, null, 3],
    ['CHANGE_IN_CAPACITY', 5, -2, null, 3],
    ['CHANGE_IN_PERCENTAGE', 10, 1, null, 11], // 0.1 → ceil 1
    ['CHANGE_IN_PERCENTAGE', 10, 15, null, 11], // 1.5 → floor 1
    ['CHANGE_IN_PERCENTAGE', 10, 22, null, 12], // 2.2 → floor 2
    ['CHANGE_IN_PERCENTAGE', 10, -1, null, 9], // -0.1 → floor -1
    ['CHANGE_IN_PERCENTAGE', 10, -22, null, 8], // -2.2 → ceil -2
    ['CHANGE_IN_PERCENTAGE', 10, 15, 3, 13], // min_step raises +1 to +3
    ['CHANGE_IN_PERCENTAGE', 10, -15, 3, 7], // and -1 to -3
    ['CHANGE_IN_PERCENTAGE', 10, 0, 2, 10], // decision 15: 0 % is no change (Senlin shrank by 2)
    ['CHANGE_IN_PERCENTAGE', 0, 50, 2, 0], // 50 % of nothing is no change either
  ])('%s current %i number %p min_step %p → %i', (type, current, number, minStep, expected) => {
    expect(calculateDesired(current, type, number, minStep)).toBe(expected);
  });
});

describe('truncateDesired (§3.2)', () => {
  const cluster = { min_size: 1, max_size: 5, desired_capacity: 3 };
  it.each([
    [0, 2, null, 2],
    [0, null, null, 1],
    [9, null, 4, 4],
    [9, null, null, 5],
    [9, null, 0, 9], // a max of 0 never truncates
  ])('desired %i min %p max %p → %i', (desired, min, max, expected) => {
    expect(truncateDesired(cluster, desired, min, max)).toBe(expected);
  });
  it('does not truncate to an unlimited cluster max', () => {
    expect(truncateDesired({ min_size: 0, max_size: -1, desired_capacity: 0 }, 50, null, null)).toBe(50);
  });
});

describe('checkSizeParams (§3.3), first failing rule wins', () => {
  const cluster = { min_size: 2, max_size: 5, desired_capacity: 3 };
  it.each([
    [1001, null, null, false, 'The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000).'],
    [1, 2, null, false, 'The target capacity (1) is less than the specified min_size (2).'],
    [1, null, null, true, "The target capacity (1) is less than the cluster's min_size (2)."],
    [1, null, null, false, null],
    [7, null, 6, false, 'The target capacity (7) is greater than the specified max_size (6).'],
    [6, null, null, true, "The target capacity (6) is greater than the cluster's max_size (5)."],
    [null, 4, 3, false, 'The specified min_size (4) is greater than the specified max_size (3).'],
    [null, 6, null, false, 'The specified min_size (6) is greater than the current max_size (5) of the cluster.'],
    [null, 4, null, true, 'The specified min_size (4) is greater than the current desired_capacity (3) of the cluster.'],
    [null, null, 1001, false, 'The specified max_size (1001) is greater than the maximum number of nodes allowed per cluster (1000).'],
    [null, null, 1, false, 'The specified max_size (1) is less than the current min_size (2) of the cluster.'],
    [null, 1, 2, true, 'The specified max_size (2) is less than the current desired_capacity (3) of the cluster.'],
    [4, 1, 6, true, null],
  ])('desired %p min %p max %p strict %p', (desired, min, max, strict, expected) => {
    expect(checkSizeParams(cluster, desired, min, max, strict)).toBe(expected);
  });
});

describe('parseResizeParams (§3.4, decision 14)', () => {
  const cluster = { min_size: 0, max_size: 10, desired_capacity: 4 };
  it('writes deletion for a shrink, replacing what was there', () => {
    const data: Record<string, unknown> = { deletion: { count: 9, zones: {} } };
    expect(parseResizeParams({ adjustment_type: 'CHANGE_IN_CAPACITY', number: -2 }, data, cluster, 4)).toEqual({ ok: true });
    expect(data).toEqual({ deletion: { count: 2 } });
  });
  it('writes creation.count 0 when nothing changes', () => {
    const data: Record<string, unknown> = {};
    parseResizeParams({}, data, cluster, 4);
    expect(data).toEqual({ creation: { count: 0 } });
  });
  it('treats a current size of 0 as 0, not the desired capacity', () => {
    const data: Record<string, unknown> = {};
    parseResizeParams({ adjustment_type: 'CHANGE_IN_CAPACITY', number: 1 }, data, cluster, 0);
    expect(data).toEqual({ creation: { count: 1 } });
  });
  it('truncates when not strict and fails when strict', () => {
    const data: Record<string, unknown> = {};
    parseResizeParams({ adjustment_type: 'EXACT_CAPACITY', number: 20, strict: false }, data, cluster, 4);
    expect(data).toEqual({ creation: { count: 6 } });
    const strict: Record<string, unknown> = {};
    expect(parseResizeParams({ adjustment_type: 'EXACT_CAPACITY', number: 20, strict: true }, strict, cluster, 4)).toEqual({
      ok: false,
      reason: "The target capacity (20) is greater than the cluster's max_size (10).",
    });
    expect(strict).toEqual({});
  });
});

describe('request-time checks (senlin-api §5.5)', () => {
  const cluster = { min_size: 0, max_size: 5, desired_capacity: 3 };
  it.each([
    [{}, 'Not enough parameters to do resize action.'],
    [{ adjustment_type: 'EXACT_CAPACITY' }, 'Missing number value for size adjustment.'],
    [{ number: 2 }, 'Missing adjustment_type value for size adjustment.'],
    [{ min_size: 20, max_size: 10 }, 'The specified min_size (20) is greater than the specified max_size (10).'],
    [{ adjustment_type: 'EXACT_CAPACITY', number: -1 }, "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."],
    [{ max_size: 2 }, 'The specified max_size (2) is less than the current desired_capacity (3) of the cluster.'],
    [{ adjustment_type: 'EXACT_CAPACITY', number: 6 }, "The target capacity (6) is greater than the cluster's max_size (5)."],
    [{ adjustment_type: 'EXACT_CAPACITY', number: 6, strict: false }, null],
  ])('resize %p', (params, expected) => {
    expect(checkResizeRequest(cluster, 3, params)).toBe(expected);
  });
  it('refuses a count of 0 and lets scale-out past max_size through (the action fails later)', () => {
    expect(checkScaleRequest(cluster, 'CLUSTER_SCALE_OUT', 0)).toBe('Count for scale-out request cannot be 0.');
    expect(checkScaleRequest(cluster, 'CLUSTER_SCALE_IN', 0)).toBe('Count for scale-in request cannot be 0.');
    expect(checkScaleRequest(cluster, 'CLUSTER_SCALE_OUT', 3)).toBeNull();
    expect(checkScaleRequest(cluster, 'CLUSTER_SCALE_OUT', 998)).toBe(
      'The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000).',
    );
  });
});

describe('victim selection (§3.5)', () => {
  const nodes = [
    { id: 'old', status: 'ACTIVE', created_at: '2024-01-01T00:00:00Z', profile_created_at: '2024-03-01T00:00:00Z' },
    { id: 'err', status: 'ERROR', created_at: '2024-01-02T00:00:00Z' },
    { id: 'new', status: 'ACTIVE', created_at: '2024-01-05T00:00:00Z', profile_created_at: '2024-01-01T00:00:00Z' },
    { id: 'never', status: 'INIT', created_at: null },
    { id: 'mid', status: 'ACTIVE', created_at: '2024-01-03T00:00:00Z', profile_created_at: '2024-02-01T00:00:00Z' },
    { id: 'tainted', status: 'ACTIVE', tainted: true, created_at: '2024-01-04T00:00:00Z' },
  ];
  it('puts error, warning and tainted nodes first, then never-created ones', () => {
    expect(filterErrorNodes(nodes).bad).toEqual(['err', 'tainted', 'never']);
  });
  it('gives the good nodes in list order, the list itself when every node is good', () => {
    expect(filterErrorNodes(nodes).good.map((n) => n.id)).toEqual(['old', 'new', 'mid']);
    const good = [nodes[0], nodes[2], nodes[4]];
    expect(filterErrorNodes(good)).toEqual({ bad: [], good });
    expect(filterErrorNodes(good).good).toBe(good);
    expect(filterErrorNodes([nodes[1], ...good]).good).toEqual(good);
    expect(filterErrorNodes([...good, nodes[3]]).good).toEqual(good);
    expect(filterErrorNodes([])).toEqual({ bad: [], good: [] });
  });
  it.each([
    [1, true, ['err']],
    [4, true, ['err', 'tainted', 'never', 'old']],
    [5, false, ['err', 'tainted', 'never', 'new', 'mid']],
    [9, false, ['err', 'tainted', 'never', 'new', 'mid', 'old']],
  ])('by age: count %i old_first %p', (count, oldFirst, expected) => {
    expect(nodesByAge(nodes, count, oldFirst)).toEqual(expected);
  });
  it('by profile age picks the oldest profile', () => {
    expect(nodesByProfileAge(nodes, 4)).toEqual(['err', 'tainted', 'never', 'new']);
  });
  it('by random draws good nodes from the injected source, deterministically', () => {
    const a = nodesByRandom(nodes, 5, seededRandom(7));
    expect(a.slice(0, 3)).toEqual(['err', 'tainted', 'never']);
    expect(new Set(a).size).toBe(5);
    expect(nodesByRandom(nodes, 5, seededRandom(7))).toEqual(a);
    expect(nodesByRandom(nodes, 4, () => 0)).toEqual(['err', 'tainted', 'never', 'old']);
    expect(nodesByRandom(nodes, 4, () => 0.99)).toEqual(['err', 'tainted', 'never', 'mid']);
  });
});

describe('timestampMillis', () => {
  it.each(['2024-01-01T00:00:00Z', '2024-02-29T23:59:59.123Z', '2024-02-29T23:59:59.123456Z', '2024-01-01T01:00:00+01:00', '2024-01-01 00:00:00Z'])(
    'agrees with Date.parse for %s',
    (v) => {
      expect(timestampMillis(v)).toBe(Date.parse(v));
    },
  );
  it('treats missing or unreadable times as the epoch', () => {
    expect(timestampMillis(null)).toBe(0);
    expect(timestampMillis('soon')).toBe(0);
  });
});

describe('parseTimestamp', () => {
  // canonical strings with any digit or separator changed: every field out of range, every separator wrong
  const canonical = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
  const mangled = fc.tuple(canonical, fc.nat(23), fc.constantFrom('0', '1', '2', '3', '5', '9', '-', ':', 'T', '.', 'Z', ' ', 'x')).map(([v, i, c]) => v.slice(0, i) + c + v.slice(i + 1));
  it('is Date.parse, for canonical timestamps and every one-character change of them', () => {
    fc.assert(
      fc.property(fc.oneof(canonical, mangled), (v) => {
        expect(Object.is(parseTimestamp(v), Date.parse(v))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
  it.each(['2024-02-31T00:00:00.000Z', '2024-01-01T24:00:00.000Z', '2024-13-01T00:00:00.000Z', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.000+01:00', 'soon'])('is Date.parse for %s', (v) => {
    expect(Object.is(parseTimestamp(v), Date.parse(v))).toBe(true);
  });
});

describe('nodesByAge picks as a stable sort would', () => {
  it('for any times, counts and duplicates', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), fc.integer({ min: 0, max: 45 }), fc.boolean(), (days, count, oldFirst) => {
        const nodes = days.map((d, i) => ({ id: `n${i}`, status: 'ACTIVE', created_at: new Date(Date.UTC(2024, 0, 1 + d)).toISOString() }));
        const sorted = nodes.map((n, i) => ({ n, i })).sort((a, b) => Date.parse(a.n.created_at) - Date.parse(b.n.created_at) || a.i - b.i);
        const wanted = Math.min(count, nodes.length);
        const expected = Array.from({ length: wanted }, (_, i) => (oldFirst ? sorted[i] : sorted[sorted.length - 1 - i]).n.id);
        expect(nodesByAge(nodes, count, oldFirst)).toEqual(expected);
      }),
    );
  });
  it('for one victim among ties (the scan that takes one)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 12 }), fc.boolean(), (days, oldFirst) => {
        const nodes = days.map((d, i) => ({ id: `n${i}`, status: 'ACTIVE', created_at: new Date(Date.UTC(2024, 0, 1 + d)).toISOString() }));
        const sorted = nodes.map((n, i) => ({ n, i })).sort((a, b) => Date.parse(a.n.created_at) - Date.parse(b.n.created_at) || a.i - b.i);
        expect(nodesByAge(nodes, 1, oldFirst)).toEqual([(oldFirst ? sorted[0] : sorted[sorted.length - 1]).n.id]);
      }),
    );
  });
});

describe('timestampMillis property', () => {
  it('matches Date.parse for any canonical UTC time', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(Date.UTC(1, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true }), (d) => {
        const iso = d.toISOString();
        expect(timestampMillis(iso)).toBe(Date.parse(iso));
        expect(timestampMillis(iso.replace(/\.\d{3}Z$/, 'Z'))).toBe(Date.parse(iso.replace(/\.\d{3}Z$/, 'Z')));
      }),
    );
  });
});
