import { Progress } from './progress';

/**
 * A benchmark module: `bench/<name>.bench.ts` exports one as `benchmark` (or as its default export).
 * The runner finds every `*.bench.js` beside it in dist/bench, so adding a file is all it takes.
 */
export interface Benchmark {
  /** kebab-case; selects the benchmark (`--only <name>`) and names `bench/results/<name>.json` */
  name: string;
  /** one line for `--list` and the results file */
  description: string;
  run(ctx: BenchContext): Promise<BenchResult>;
}

export interface BenchContext {
  /** `--quick`: a smoke run of a few seconds; figures are not meant to be quoted */
  quick: boolean;
  /** `--param key=value` pairs; a benchmark refuses keys it does not know */
  params: Record<string, string>;
  /** progress on stderr; stdout is kept for the result tables */
  progress: Progress;
  /** a line on stderr, above the progress line */
  log(message: string): void;
  /** the repository root (where package.json is) */
  root: string;
}

export type Cell = string | number | boolean | null;

export interface Column {
  key: string;
  label: string;
  /** numbers are right-aligned unless told otherwise */
  align?: 'left' | 'right';
}

export interface BenchTable {
  title: string;
  columns: Column[];
  rows: Array<Record<string, Cell>>;
  /** printed under the table */
  footnotes?: string[];
}

/** A target from the issue and whether the measurement met it. */
export interface TargetCheck {
  what: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResult {
  /** what was run: sizes, iterations, warm-up, budgets */
  parameters: Record<string, unknown>;
  /** every figure, machine-readable (the tables are views of these) */
  figures: unknown;
  tables: BenchTable[];
  targets?: TargetCheck[];
  /** parts of the benchmark that were not run, and why */
  skipped?: Array<{ what: string; why: string }>;
  notes?: string[];
}

/** Typed identity, so a module gets checked against the interface where it is written. */
export function defineBenchmark(benchmark: Benchmark): Benchmark {
  return benchmark;
}

export function isBenchmark(value: unknown): value is Benchmark {
  if (typeof value !== 'object' || value === null) return false;
  const b = value as Record<string, unknown>;
  return typeof b.name === 'string' && typeof b.description === 'string' && typeof b.run === 'function';
}
