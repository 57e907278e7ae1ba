/** Summary of timing samples, in nanoseconds. */
export interface Summary {
  samples: number;
  min: number;
  median: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** 1e9 / mean: how many back-to-back operations one core completes per second */
  per_second: number;
}

/** Nearest-rank percentile of sorted values (q in 0..1). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

export function summarise(samples: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  const mean = sorted.length > 0 ? sum / sorted.length : NaN;
  return {
    samples: sorted.length,
    min: sorted[0] ?? NaN,
    median: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean,
    per_second: mean > 0 ? 1e9 / mean : NaN,
  };
}

/** A summary with times in microseconds rounded to 0.01 µs, for results files. */
export function inMicroseconds(s: Summary): Record<keyof Summary, number> {
  const us = (ns: number) => Math.round(ns / 10) / 100;
  return {
    samples: s.samples,
    min: us(s.min),
    median: us(s.median),
    p90: us(s.p90),
    p99: us(s.p99),
    max: us(s.max),
    mean: us(s.mean),
    per_second: Math.round(s.per_second),
  };
}

/** `1.23 µs`, `45.6 µs`, `1.20 ms`: three significant figures. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return '-';
  if (ns < 1e3) return `${ns.toFixed(0)} ns`;
  if (ns < 1e6) return `${sig3(ns / 1e3)} µs`;
  if (ns < 1e9) return `${sig3(ns / 1e6)} ms`;
  return `${sig3(ns / 1e9)} s`;
}

export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return '-';
  return Math.round(perSecond).toLocaleString('en-US');
}

function sig3(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
