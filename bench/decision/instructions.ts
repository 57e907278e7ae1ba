/**
 * Instructions per decision, counted by valgrind, for the fixed cost of one `evaluate()` (issue 15
 * point 3). Wall-clock A/B on this shared machine has misled earlier sessions; an instruction count
 * does not depend on the load. See docs/benchmarks-history.md, "decision", Session 10, and instructions.sh,
 * which runs this under callgrind.
 *
 *   node dist/bench/decision/instructions.js --scenario 10:full:in-1 [--warmup 20000] [--settle 300] [--calls 1000] [--parse-only]
 *
 * builds the scenario's summarised snapshot exactly as the decision benchmark does (buildSnapshot,
 * summarisedSnapshot, JSON text), warms up, then runs `--calls` calls of `evaluate()`, each on a
 * fresh `JSON.parse` of the text (as the benchmark; `--parse-only` parses and does not decide).
 * Right before that loop it calls `process.getegid()`, right after it `process.getgroups()`: Node
 * calls the libc functions of those names for nothing else, so callgrind cuts the loop out of the
 * run with `--zero-before=getegid --dump-before=getgroups`. With TRELLIS_CALLGRIND_WAIT set, it
 * says 'ready <pid>' on stderr after the warm-up and waits for that file, so that the warm-up can
 * run uninstrumented.
 *
 * Without valgrind it prints the wall time of the loop (a sanity check, not a yardstick).
 */
import { createHash } from 'crypto';
import { existsSync } from 'fs';
import { EvaluationInput, PolicyRegistry, evaluate } from '@trellis/policies';
import { ChainKind, OperationKind, Scenario, buildSnapshot } from './snapshots';
import { summarisedSnapshot } from './summarised';

/** The decision benchmark's (above Senlin's default, so the 10,000-node scenarios pass). */
export const MAX_NODES_PER_CLUSTER = 1_000_000;

export function parseScenario(text: string): Scenario {
  const [nodes, chain, op] = text.split(':');
  const s: Scenario = { nodes: Number(nodes), chain: chain as ChainKind, op: op as OperationKind };
  if (!Number.isInteger(s.nodes) || s.nodes <= 0 || !['zone', 'full'].includes(s.chain) || !['out-1', 'out-10pct', 'in-1', 'in-10pct'].includes(s.op)) {
    throw new Error(`--scenario nodes:chain:op, e.g. 10:full:in-1 (chain zone|full, op out-1|out-10pct|in-1|in-10pct), not '${text}'`);
  }
  return s;
}

/** The summarised snapshot's JSON text, as the decision benchmark times it. */
export function scenarioText(s: Scenario): string {
  return JSON.stringify(summarisedSnapshot(buildSnapshot(s)).input);
}

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
}

function main(): void {
  const s = parseScenario(arg('scenario'));
  const warmup = Number(arg('warmup', '20000'));
  const calls = Number(arg('calls', '1000'));
  const settle = Number(arg('settle', '300'));
  const parseOnly = process.argv.includes('--parse-only');
  const text = scenarioText(s);
  const options = { registry: PolicyRegistry.withBuiltins(), maxNodesPerCluster: MAX_NODES_PER_CLUSTER, trustSpecDigests: true };
  const digest = createHash('sha256').update(JSON.stringify(evaluate(JSON.parse(text) as EvaluationInput, options))).digest('hex');
  let sink = 0;
  const once = parseOnly
    ? () => {
        sink += (JSON.parse(text) as EvaluationInput).cluster!.nodes!.length;
      }
    : () => {
        sink += evaluate(JSON.parse(text) as EvaluationInput, options).plan ? 1 : 0;
      };
  for (let i = 0; i < warmup; i++) once();
  // Under valgrind --instr-atstart=no the warm-up runs uninstrumented (fast). The driver then says
  // 'ready' on stderr and waits for the file TRELLIS_CALLGRIND_WAIT, which instructions.sh creates
  // once `callgrind_control --instr=on` has returned. (Running callgrind_control from here, with
  // execFileSync, cost V8 optimised code that it then recompiled for thousands of calls.)
  const flag = process.env.TRELLIS_CALLGRIND_WAIT;
  if (flag) {
    process.stderr.write(`ready ${process.pid}\n`);
    const cell = new Int32Array(new SharedArrayBuffer(4));
    while (!existsSync(flag)) Atomics.wait(cell, 0, 0, 20);
  }
  for (let i = 0; i < settle; i++) {
    once();
    // with node --trace-opt: where in the settling V8 still recompiles
    if (process.env.TRELLIS_TRACE_SETTLE === '1' && (i + 1) % 100 === 0) console.log(`=== settle ${i + 1}`);
  }
  process.getegid!(); // callgrind: --zero-before=getegid
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) once();
  const elapsed = process.hrtime.bigint() - started;
  process.getgroups!(); // callgrind: --dump-before=getgroups
  process.stdout.write(`${JSON.stringify({ scenario: arg('scenario'), warmup, calls, parseOnly, digest, sink, ns_per_call: Number(elapsed) / calls })}\n`);
}

if (require.main === module) main();
