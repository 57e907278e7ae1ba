/**
 * Wall-clock A/B of evaluate() in one process (docs/benchmarks-history.md, "decision", Sessions 9 and 10): two
 * builds of libs/policies loaded side by side, blocks of calls alternating between them, each call
 * on a fresh JSON.parse of the decision benchmark's summarised snapshot (parsed untimed), timed with
 * process.hrtime.bigint() as the benchmark does. Both builds must make the same decision (digest).
 *
 *   node dist/bench/decision/ab.js --a /work/wt-base --b . --scenario 10:full:in-1 [--rounds 60] [--block 500] [--warmup 20000]
 *
 * Prints each build's median, and b ÷ a for the medians of all calls and as the median of the
 * rounds' ratios. Each of --a and --b is a checkout whose `npm run build` has run.
 */
import { createHash } from 'crypto';
import { resolve } from 'path';
import type { EvaluationInput, evaluate as Evaluate, PolicyRegistry as Registry } from '@trellis/policies';
import { MAX_NODES_PER_CLUSTER, parseScenario, scenarioText } from './instructions';

interface Build {
  evaluate: typeof Evaluate;
  options: { registry: Registry; maxNodesPerCluster: number; trustSpecDigests: boolean };
  times: number[];
}

function load(root: string): Build {
  const lib = require(resolve(root, 'dist/libs/policies/src')) as { evaluate: typeof Evaluate; PolicyRegistry: typeof Registry };
  return { evaluate: lib.evaluate, options: { registry: lib.PolicyRegistry.withBuiltins(), maxNodesPerCluster: MAX_NODES_PER_CLUSTER, trustSpecDigests: true }, times: [] };
}

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
}

const median = (v: number[]) => {
  const s = [...v].sort((x, y) => x - y);
  return s[Math.ceil(s.length / 2) - 1];
};

function main(): void {
  const scenario = arg('scenario');
  const text = scenarioText(parseScenario(scenario));
  const rounds = Number(arg('rounds', '60'));
  const block = Number(arg('block', '500'));
  const warmup = Number(arg('warmup', '20000'));
  const a = load(arg('a'));
  const b = load(arg('b'));
  const digest = (x: Build) => createHash('sha256').update(JSON.stringify(x.evaluate(JSON.parse(text) as EvaluationInput, x.options))).digest('hex');
  if (digest(a) !== digest(b)) throw new Error(`${scenario}: the two builds decide differently`);
  for (const x of [a, b]) for (let i = 0; i < warmup; i++) x.evaluate(JSON.parse(text) as EvaluationInput, x.options);
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const medians: number[] = [];
    for (const x of r % 2 === 0 ? [a, b] : [b, a]) {
      const t: number[] = new Array(block);
      for (let i = 0; i < block; i++) {
        const input = JSON.parse(text) as EvaluationInput;
        const started = process.hrtime.bigint();
        x.evaluate(input, x.options);
        t[i] = Number(process.hrtime.bigint() - started);
      }
      for (const v of t) x.times.push(v);
      medians.push(median(t));
    }
    // medians[] is in run order: put a's first
    ratios.push(r % 2 === 0 ? medians[1] / medians[0] : medians[0] / medians[1]);
  }
  const ma = median(a.times);
  const mb = median(b.times);
  process.stdout.write(
    `${JSON.stringify({ scenario, rounds, block, a_median_us: ma / 1000, b_median_us: mb / 1000, b_over_a_all: +(mb / ma).toFixed(3), b_over_a_rounds: +median(ratios).toFixed(3) })}\n`,
  );
}

if (require.main === module) main();
