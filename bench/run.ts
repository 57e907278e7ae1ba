import * as fs from 'fs';
import * as path from 'path';
import { Benchmark, BenchResult, isBenchmark } from './harness/benchmark';
import * as os from 'os';
import { findRoot, machineFacts, packageVersions, sourceState } from './harness/machine';
import { loopCalibration, timerOverhead } from './harness/sampler';
import { Progress } from './harness/progress';
import { renderTable } from './harness/table';

const USAGE = `usage: npm run bench -- [--quick] [--only <name>[,<name>...]] [--param <key>=<value>]... [--list]

  --quick              a smoke run of a few seconds; writes bench/results/<name>.tmp.json (not for quoting)
  --only <names>       run only these benchmarks (repeatable, or comma-separated)
  --param <key=value>  a benchmark parameter (see BENCHMARKS.md); a run with any writes <name>.tmp.json
  --list               list the benchmarks and exit

Full runs write bench/results/<name>.json: machine, package versions, parameters and every figure.`;

interface Options {
  quick: boolean;
  only: string[];
  list: boolean;
  params: Record<string, string>;
}

class UsageError extends Error {}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { quick: false, only: [], list: false, params: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--list') options.list = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      if (!value || value.startsWith('--')) throw new UsageError('--only needs a benchmark name');
      options.only.push(...value.split(',').filter(Boolean));
    } else if (arg === '--param' || arg.startsWith('--param=')) {
      const value = arg === '--param' ? argv[++i] : arg.slice('--param='.length);
      const eq = value?.indexOf('=') ?? -1;
      if (!value || eq <= 0) throw new UsageError(`--param needs <key>=<value>, not '${value ?? ''}'`);
      options.params[value.slice(0, eq)] = value.slice(eq + 1);
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new UsageError(`unknown argument '${arg}'`);
  }
  return options;
}

/** Every `*.bench.js` module beside this file, in name order. */
function discover(dir: string): Array<{ file: string; benchmark: Benchmark }> {
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.bench.js'))
    .sort();
  return files.map((f) => {
    const file = path.join(dir, f);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(file) as Record<string, unknown>;
    const benchmark = mod.benchmark ?? mod.default;
    if (!isBenchmark(benchmark)) throw new Error(`${file} exports no benchmark ({name, description, run}) as 'benchmark' or default`);
    const expected = f.slice(0, -'.bench.js'.length);
    if (benchmark.name !== expected) throw new Error(`${file} exports the benchmark '${benchmark.name}': its name must be '${expected}'`);
    return { file, benchmark };
  });
}

function printResult(benchmark: Benchmark, result: BenchResult): void {
  const out: string[] = [`== ${benchmark.name}: ${benchmark.description}`, ''];
  for (const table of result.tables) out.push(renderTable(table), '');
  if (result.targets?.length) {
    out.push(
      renderTable({
        title: 'Targets',
        columns: [
          { key: 'what', label: 'what' },
          { key: 'target', label: 'target', align: 'right' },
          { key: 'measured', label: 'measured', align: 'right' },
          { key: 'met', label: 'met' },
        ],
        rows: result.targets.map((t) => ({ ...t })),
      }),
      '',
    );
  }
  for (const s of result.skipped ?? []) out.push(`skipped: ${s.what}: ${s.why}`);
  for (const n of result.notes ?? []) out.push(`note: ${n}`);
  process.stdout.write(`${out.join('\n').trimEnd()}\n\n`);
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`bench: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  // dist/bench/run.js sits under the repository; the working directory is the fallback for other builds
  let root: string;
  try {
    root = findRoot(__dirname);
  } catch {
    root = findRoot(process.cwd());
  }
  const all = discover(__dirname);
  if (options.list) {
    for (const { benchmark } of all) process.stdout.write(`${benchmark.name.padEnd(16)} ${benchmark.description}\n`);
    return 0;
  }
  const unknown = options.only.filter((n) => !all.some((b) => b.benchmark.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`bench: no benchmark named ${unknown.join(', ')} (have: ${all.map((b) => b.benchmark.name).join(', ')})\n`);
    return 2;
  }
  const selected = options.only.length > 0 ? all.filter((b) => options.only.includes(b.benchmark.name)) : all;
  const machine = machineFacts();
  const versions = packageVersions(root);
  const source = sourceState(root);
  const resultsDir = path.join(root, 'bench', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  process.stderr.write(
    `bench: ${selected.length} benchmark(s)${options.quick ? ' (quick smoke)' : ''} on ${machine.cpu_model}, ` +
      `${machine.cores} cores, ${machine.memory_gib} GiB, node ${machine.node_version}\n`,
  );

  let failures = 0;
  for (const { benchmark } of selected) {
    const progress = new Progress(process.stderr, `[${benchmark.name}] `);
    const started = new Date();
    const calibrationBefore = { loop_ns_per_element: loopCalibration(), timer_overhead_ns: timerOverhead(), load_average: os.loadavg().map((l) => Math.round(l * 100) / 100) };
    let result: BenchResult;
    try {
      result = await benchmark.run({ quick: options.quick, params: options.params, progress, log: (m) => progress.log(m), root });
    } catch (e) {
      failures++;
      process.stderr.write(`[${benchmark.name}] failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      continue;
    }
    const finished = new Date();
    const calibrationAfter = { loop_ns_per_element: loopCalibration(), load_average: os.loadavg().map((l) => Math.round(l * 100) / 100) };
    printResult(benchmark, result);
    process.stdout.write(
      `machine: ${machine.cpu_model}, ${machine.cores} cores, node ${machine.node_version}; load average ${calibrationBefore.load_average.join(' ')} → ` +
        `${calibrationAfter.load_average.join(' ')}; yardstick loop ${calibrationBefore.loop_ns_per_element} → ${calibrationAfter.loop_ns_per_element} ns/element\n\n`,
    );
    // Only a full run with default parameters replaces the figures BENCHMARKS.md quotes.
    const partial = options.quick || Object.keys(options.params).length > 0;
    const file = path.join(resultsDir, `${benchmark.name}${partial ? '.tmp' : ''}.json`);
    const record = {
      benchmark: benchmark.name,
      description: benchmark.description,
      mode: options.quick ? 'quick' : 'full',
      params: options.params,
      command,
      started_at: started.toISOString(),
      finished_at: finished.toISOString(),
      duration_seconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
      machine,
      calibration: {
        note: 'yardstick: ns per element of an Int32Array sum (an idle modern core ~0.3-0.5); higher means a busy or slow machine',
        before: calibrationBefore,
        after: calibrationAfter,
      },
      source,
      ...versions,
      parameters: result.parameters,
      targets: result.targets ?? [],
      skipped: result.skipped ?? [],
      notes: result.notes ?? [],
      figures: result.figures,
      tables: result.tables,
    };
    fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    process.stderr.write(`[${benchmark.name}] wrote ${path.relative(process.cwd(), file) || file}\n`);
  }
  return failures > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
