import fc from 'fast-check';

/**
 * How many cases a fuzz property runs and from which seed (`npm run test:fuzz`, docs/RELIABILITY.md
 * §10). CI runs a bounded count; `npm run test:fuzz -- --long` (FUZZ_RUNS=10000) runs 10,000 cases
 * per property. FUZZ_SEED replays a run: the seed is printed at the start of every property and
 * fast-check prints it again with the counterexample when a property fails.
 */
export interface FuzzSettings {
  seed: number;
  runs: number;
}

const positiveInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer (got '${raw}')`);
  return n;
};

/** The settings of one property; `ciRuns` is its count when FUZZ_RUNS is not set. */
export function fuzzSettings(property: string, ciRuns: number): FuzzSettings {
  const seed = positiveInt('FUZZ_SEED', process.env.FUZZ_SEED, Date.now() ^ (Math.random() * 0x7fffffff));
  const runs = positiveInt('FUZZ_RUNS', process.env.FUZZ_RUNS, ciRuns);
  // stdout, not console.log: jest's console wrapper adds a stack line to every message
  process.stdout.write(`fuzz: ${property}: ${runs} cases, FUZZ_SEED=${seed}\n`);
  return { seed, runs };
}

/**
 * fast-check's parameters for a fuzz property: the seed, the count, and no shrinking time beyond
 * what a failure needs. Shrinking replays requests against a server whose state moved on, so the
 * first counterexample (printed with the seed) is the one to trust; shrunk ones are a hint.
 */
export function fcParameters(settings: FuzzSettings): fc.Parameters<unknown> {
  return { seed: settings.seed, numRuns: settings.runs, endOnFailure: true };
}
