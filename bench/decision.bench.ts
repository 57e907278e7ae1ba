import { createHash } from 'crypto';
import { EvaluationInput, EvaluationOutput, PolicyRegistry, evaluate } from '@trellis/policies';
import { SenlinFigure, SenlinRun, SenlinScenario, runSenlin } from './decision/senlin';
import { BenchTable, Cell, TargetCheck, defineBenchmark } from './harness/benchmark';
import { Progress } from './harness/progress';
import { sample } from './harness/sampler';
import { Summary, formatNs, formatRate, inMicroseconds, summarise } from './harness/stats';
import { chain, hookLabel, instantiate, plan, prepareChain, prepareHook, preparePlan, runningHooks, stateOf } from './decision/pieces';
import {
  CHAIN_LABELS,
  ChainKind,
  OPERATION_LABELS,
  OperationKind,
  Scenario,
  ZONES,
  buildSnapshot,
  isScaleOut,
  operationCount,
} from './decision/snapshots';
import { summarisedSnapshot } from './decision/summarised';

const CHAINS: ChainKind[] = ['zone', 'full'];
const OPERATIONS: OperationKind[] = ['out-1', 'out-10pct', 'in-1', 'in-10pct'];

/** Above Senlin's default of 1,000 so that 10,000-node clusters (and 1,000 + 10 %) pass the size checks. */
const MAX_NODES_PER_CLUSTER = 1_000_000;

interface Iterations {
  /** timed evaluate() calls per scenario */
  samples: number;
  warmup: number;
  /** timed calls per piece in the breakdown */
  breakdown: number;
}

const FULL: Record<number, Iterations> = {
  10: { samples: 20_000, warmup: 2_000, breakdown: 5_000 },
  100: { samples: 10_000, warmup: 1_000, breakdown: 2_000 },
  1_000: { samples: 3_000, warmup: 300, breakdown: 500 },
  10_000: { samples: 1_000, warmup: 50, breakdown: 100 },
};

const QUICK: Record<number, Iterations> = {
  10: { samples: 300, warmup: 100, breakdown: 50 },
  100: { samples: 200, warmup: 50, breakdown: 30 },
};

/** The targets for the median decision time. */
const TARGETS: Array<{ chain: ChainKind; nodes: number; ns: number }> = [
  { chain: 'zone', nodes: 1_000, ns: 10_000 },
  { chain: 'zone', nodes: 10_000, ns: 100_000 },
  { chain: 'full', nodes: 1_000, ns: 50_000 },
  { chain: 'full', nodes: 10_000, ns: 500_000 },
];

interface Breakdown {
  /** median ns of each piece timed alone */
  policies: number;
  hooks: Record<string, number>;
  chain: number;
  plan: number;
  /** derived: chain − Σ hooks (trace, changed keys, ordering) */
  bookkeeping: number;
  /** derived: evaluate − policies − chain − plan (input checks, cloud view, output) */
  other: number;
  samples: number;
}

interface ScenarioResult {
  scenario: Scenario;
  count: number;
  digest: string;
  /** evaluate() on the summarised snapshot the engine loads (counts per zone, candidates listed) */
  evaluate: Summary;
  /** evaluate() on the same snapshot with every node listed (the input before issue 15) */
  whole: Summary;
  /** nodes listed in the summarised snapshot, and how deep per zone: one depth, or each zone's (the zone plan's share) */
  listed: number;
  depth: number | Record<string, number>;
  /** the zone plan of the decision (creation.zones or deletion.zones), to compare with Senlin's */
  zonePlan: Record<string, number> | null;
  breakdown: Breakdown | null;
}

/** Issue 15: the full chain at least this many times faster than Senlin's zone placement pre_op, median and p99. */
const SENLIN_RATIO = 3;

const senlinKey = (nodes: number, op: OperationKind) => `${nodes}:${op}`;

const scenarioLabel = (s: Scenario) => `${s.nodes.toLocaleString('en-US')} nodes, ${CHAIN_LABELS[s.chain]}, ${OPERATION_LABELS[s.op]}`;

/**
 * Runs the decision once untimed and checks it is the decision the scenario is about (no error, the
 * expected number of creates or deletes), and that it replays identically on a second fresh copy.
 * Returns a digest of the output, so a change to the library that alters a decision shows up.
 */
function checkDecision(s: Scenario, fresh: () => EvaluationInput, options: Parameters<typeof evaluate>[1], summarised: () => EvaluationInput): { digest: string; zonePlan: Record<string, number> | null } {
  const digestOf = (out: EvaluationOutput) => createHash('sha256').update(JSON.stringify(out)).digest('hex');
  const out = evaluate(fresh(), options);
  const expected = operationCount(s);
  const made = isScaleOut(s.op) ? out.plan?.create.length : out.plan?.delete.length;
  if (out.status !== 'OK' || out.plan?.error || made !== expected) {
    throw new Error(`${scenarioLabel(s)}: the decision is not the one benchmarked (status ${out.status}, error ${out.plan?.error}, ${made} of ${expected} nodes): ${out.reason}`);
  }
  const digest = digestOf(out);
  if (digestOf(evaluate(fresh(), options)) !== digest) throw new Error(`${scenarioLabel(s)}: the same snapshot gave two different decisions`);
  // the summarised snapshot must give the very same decision (it throws if it lists too few nodes)
  if (digestOf(evaluate(summarised(), options)) !== digest) throw new Error(`${scenarioLabel(s)}: the summarised snapshot gave another decision than the whole node list`);
  const planned = (isScaleOut(s.op) ? out.data.creation : out.data.deletion) as { zones?: Record<string, number> } | undefined;
  return { digest, zonePlan: planned?.zones ?? null };
}

function times<T>(progress: Progress, iterations: { samples: number; warmup: number }, prepare: () => T, run: (input: T) => unknown): Summary {
  const sampled = sample({
    samples: iterations.samples,
    warmup: iterations.warmup,
    batch: 1,
    prepare: (count) => {
      progress.tick(count);
      return Array.from({ length: count }, prepare);
    },
    run,
  });
  return summarise(sampled.times);
}

function breakdown(registry: PolicyRegistry, fresh: () => EvaluationInput, evaluateMedian: number, progress: Progress, it: Iterations): Breakdown {
  const n = { samples: it.breakdown, warmup: Math.ceil(it.breakdown / 5) };
  const probe = fresh();
  const running = runningHooks(stateOf(probe, MAX_NODES_PER_CLUSTER), instantiate(registry, probe));
  const policies = times(progress, n, fresh, (input) => instantiate(registry, input)).median;
  const hooks: Record<string, number> = {};
  running.forEach((binding, i) => {
    const label = hookLabel(binding);
    hooks[label] = times(
      progress,
      n,
      () => prepareHook(registry, fresh(), MAX_NODES_PER_CLUSTER, i),
      (p) => p.binding.policy.preOp(p.ctx),
    ).median;
  });
  const chainMedian = times(progress, n, () => prepareChain(registry, fresh(), MAX_NODES_PER_CLUSTER), chain).median;
  const planMedian = times(progress, n, () => preparePlan(registry, fresh(), MAX_NODES_PER_CLUSTER), plan).median;
  const hookSum = Object.values(hooks).reduce((t, v) => t + v, 0);
  return {
    policies,
    hooks,
    chain: chainMedian,
    plan: planMedian,
    bookkeeping: chainMedian - hookSum,
    other: evaluateMedian - policies - chainMedian - planMedian,
    samples: n.samples,
  };
}

/** The rebuilt pieces must produce evaluate()'s own plan, or the breakdown would time something else. */
function checkPieces(registry: PolicyRegistry, fresh: () => EvaluationInput, options: Parameters<typeof evaluate>[1], s: Scenario): void {
  const expected = evaluate(fresh(), options);
  const rebuilt = plan(preparePlan(registry, fresh(), MAX_NODES_PER_CLUSTER));
  if (JSON.stringify(rebuilt) !== JSON.stringify(expected.plan)) throw new Error(`${scenarioLabel(s)}: the breakdown's pieces do not rebuild evaluate()'s plan`);
}

const us = (ns: number) => Math.round(ns / 10) / 100;

function tables(results: ScenarioResult[], sizes: number[], chains: ChainKind[], operations: OperationKind[]): BenchTable[] {
  const main: BenchTable = {
    title: 'Decision time: one evaluate() call on a fresh snapshot (pre_op)',
    columns: [
      { key: 'nodes', label: 'nodes' },
      { key: 'chain', label: 'policies', align: 'left' },
      { key: 'op', label: 'operation', align: 'left' },
      { key: 'count', label: 'nodes changed' },
      { key: 'median', label: 'median', align: 'right' },
      { key: 'p99', label: 'p99', align: 'right' },
      { key: 'rate', label: 'decisions/s', align: 'right' },
      { key: 'listed', label: 'nodes listed' },
      { key: 'whole', label: 'whole list median / p99', align: 'right' },
      { key: 'samples', label: 'samples' },
    ],
    rows: results.map((r) => ({
      nodes: r.scenario.nodes,
      chain: CHAIN_LABELS[r.scenario.chain],
      op: OPERATION_LABELS[r.scenario.op],
      count: r.count,
      median: formatNs(r.evaluate.median),
      p99: formatNs(r.evaluate.p99),
      rate: formatRate(r.evaluate.per_second),
      listed: r.listed,
      whole: `${formatNs(r.whole.median)} / ${formatNs(r.whole.p99)}`,
      samples: r.evaluate.samples,
    })),
    footnotes: [
      'decisions/s = 1 / mean time, one core, back to back',
      'the summarised snapshot the engine loads: counts per zone, and listed only the nodes a victim selection may need; "whole list": the same decision with every node listed (same output, checked)',
    ],
  };

  const steps = sizes.slice(1).map((to, i) => ({ from: sizes[i], to }));
  const growth: BenchTable = {
    title: 'Growth of the median with cluster size (× per step)',
    columns: [
      { key: 'chain', label: 'policies', align: 'left' },
      { key: 'op', label: 'operation', align: 'left' },
      ...steps.map((st) => ({ key: `${st.from}-${st.to}`, label: `${st.from.toLocaleString('en-US')} → ${st.to.toLocaleString('en-US')}` })),
    ],
    rows: [],
    footnotes: ['10× the nodes: ×10 is linear growth, ×1 is constant time'],
  };
  for (const c of chains) {
    for (const op of operations) {
      const row: Record<string, Cell> = { chain: CHAIN_LABELS[c], op: OPERATION_LABELS[op] };
      for (const st of steps) {
        const a = results.find((r) => r.scenario.chain === c && r.scenario.op === op && r.scenario.nodes === st.from);
        const b = results.find((r) => r.scenario.chain === c && r.scenario.op === op && r.scenario.nodes === st.to);
        row[`${st.from}-${st.to}`] = a && b ? `×${(b.evaluate.median / a.evaluate.median).toFixed(1)}` : null;
      }
      growth.rows.push(row);
    }
  }

  const broken = results.filter((r): r is ScenarioResult & { breakdown: Breakdown } => r.breakdown !== null);
  if (broken.length === 0) return [main, growth];
  const hookLabels = [...new Set(broken.flatMap((r) => Object.keys(r.breakdown.hooks)))];
  const where: BenchTable = {
    title: 'Where the time goes: median µs of each piece timed alone',
    columns: [
      { key: 'nodes', label: 'nodes' },
      { key: 'chain', label: 'policies', align: 'left' },
      { key: 'op', label: 'operation', align: 'left' },
      { key: 'policies', label: 'spec resolution' },
      ...hookLabels.map((h) => ({ key: `hook:${h}`, label: `${h} pre_op` })),
      { key: 'bookkeeping', label: 'chain bookkeeping' },
      { key: 'plan', label: 'engine plan' },
      { key: 'other', label: 'rest' },
      { key: 'total', label: 'evaluate()' },
    ],
    rows: broken.map((r) => {
      const row: Record<string, Cell> = {
        nodes: r.scenario.nodes,
        chain: CHAIN_LABELS[r.scenario.chain],
        op: OPERATION_LABELS[r.scenario.op],
        policies: us(r.breakdown.policies),
        bookkeeping: us(r.breakdown.bookkeeping),
        plan: us(r.breakdown.plan),
        other: us(r.breakdown.other),
        total: us(r.evaluate.median),
      };
      for (const h of hookLabels) row[`hook:${h}`] = h in r.breakdown.hooks ? us(r.breakdown.hooks[h]) : null;
      return row;
    }),
    footnotes: [
      'spec resolution: the policies evaluate() runs, from their specs: a built-in policy seen before under the same id, name and spec digest (the loader\'s, trusted as the engine trusts it) comes from the registry\'s cache, else it is resolved',
      'deletion pre_op includes victim selection; without a deletion policy the engine plan selects the victims',
      'chain bookkeeping = chain median − Σ hook medians (trace, changed keys, ordering); rest = evaluate() − spec resolution − chain − plan',
      'medians of pieces timed apart do not add up exactly: a small negative derived value is noise',
    ],
  };
  return [main, growth, where];
}

function targets(results: ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const t of TARGETS) {
    for (const r of results.filter((x) => x.scenario.chain === t.chain && x.scenario.nodes === t.nodes)) {
      checks.push({
        what: `${CHAIN_LABELS[t.chain]}, ${t.nodes.toLocaleString('en-US')} nodes, ${OPERATION_LABELS[r.scenario.op]} (median)`,
        target: `< ${formatNs(t.ns)}`,
        measured: `${formatNs(r.evaluate.median)} (p99 ${formatNs(r.evaluate.p99)})`,
        met: r.evaluate.median < t.ns,
      });
    }
  }
  return checks;
}

function senlinTargets(results: ScenarioResult[], senlin: SenlinRun): TargetCheck[] {
  if (!senlin.ok) return [];
  return results
    .filter((r) => r.scenario.chain === 'full')
    .map((r) => {
      const f = senlin.figures.get(senlinKey(r.scenario.nodes, r.scenario.op)) as SenlinFigure;
      const med = f.median_ns / r.evaluate.median;
      const p99 = f.p99_ns / r.evaluate.p99;
      return {
        what: `full chain vs Senlin's zone placement pre_op, ${r.scenario.nodes.toLocaleString('en-US')} nodes, ${OPERATION_LABELS[r.scenario.op]} (median, p99)`,
        target: `≥ ×${SENLIN_RATIO} both`,
        measured: `×${med.toFixed(1)}, ×${p99.toFixed(1)}`,
        met: med >= SENLIN_RATIO && p99 >= SENLIN_RATIO,
      };
    });
}

function senlinTable(results: ScenarioResult[], senlin: SenlinRun): BenchTable[] {
  if (!senlin.ok) return [];
  return [
    {
      title: "Trellis's decision vs Senlin's zone placement pre_op on the same snapshots, same run",
      columns: [
        { key: 'nodes', label: 'nodes' },
        { key: 'chain', label: 'Trellis policies', align: 'left' },
        { key: 'op', label: 'operation', align: 'left' },
        { key: 'senlin', label: 'Senlin median / p99', align: 'right' },
        { key: 'trellis', label: 'Trellis median / p99', align: 'right' },
        { key: 'ratio', label: 'Senlin ÷ Trellis (median, p99)', align: 'right' },
        { key: 'plan', label: 'same zone plan', align: 'left' },
      ],
      rows: results.map((r) => {
        const f = senlin.figures.get(senlinKey(r.scenario.nodes, r.scenario.op)) as SenlinFigure;
        return {
          nodes: r.scenario.nodes,
          chain: CHAIN_LABELS[r.scenario.chain],
          op: OPERATION_LABELS[r.scenario.op],
          senlin: `${formatNs(f.median_ns)} / ${formatNs(f.p99_ns)}`,
          trellis: `${formatNs(r.evaluate.median)} / ${formatNs(r.evaluate.p99)}`,
          ratio: `×${(f.median_ns / r.evaluate.median).toFixed(1)}, ×${(f.p99_ns / r.evaluate.p99).toFixed(1)}`,
          plan: JSON.stringify(r.zonePlan) === JSON.stringify(f.plan) ? 'yes' : `no: ${JSON.stringify(r.zonePlan)} vs ${JSON.stringify(f.plan)}`,
        };
      }),
      footnotes: [
        "Senlin: ZonePlacementPolicy.pre_op alone (python3-senlin 14), database and Nova faked out, as ../shared/bench/senlin-zone-preop.py; Trellis: evaluate() of the whole chain, plan and victims included",
        'a ratio of ×3 or more at every size, median and p99, is the issue-15 target for the full chain',
      ],
    },
  ];
}

const PARAMS = ['sizes', 'chains', 'operations', 'breakdown'];

/** `--param` lists: a subset of the defaults, for quicker runs while working on the library. */
function subset<T extends string | number>(params: Record<string, string>, key: string, all: readonly T[], parse: (v: string) => T): T[] {
  const raw = params[key];
  if (raw === undefined) return [...all];
  const picked = raw.split(',').map((v) => parse(v.trim()));
  const unknown = picked.filter((v) => !all.includes(v));
  if (unknown.length > 0 || picked.length === 0) throw new Error(`--param ${key}: '${raw}' is not a list of ${all.join(', ')}`);
  return all.filter((v) => picked.includes(v));
}

export const benchmark = defineBenchmark({
  name: 'decision',
  description: 'policy decision time in process: zone placement alone and the full chain, 10 to 10,000 nodes',
  async run(ctx) {
    const unknown = Object.keys(ctx.params).filter((k) => !PARAMS.includes(k));
    if (unknown.length > 0) throw new Error(`unknown --param ${unknown.join(', ')} (decision takes ${PARAMS.join(', ')})`);
    const plans = ctx.quick ? QUICK : FULL;
    const allSizes = Object.keys(plans)
      .map(Number)
      .sort((a, b) => a - b);
    const sizes = subset(ctx.params, 'sizes', allSizes, (v) => Number(v.replace(/_/g, '')));
    const chains = subset(ctx.params, 'chains', CHAINS, (v) => v as ChainKind);
    const operations = subset(ctx.params, 'operations', OPERATIONS, (v) => v as OperationKind);
    const withBreakdown = (ctx.params.breakdown ?? 'on') !== 'off';
    const registry = PolicyRegistry.withBuiltins();
    // as the engine's evaluator calls it (libs/decisions createEvaluator): its loader's spec digests trusted
    const options = { registry, maxNodesPerCluster: MAX_NODES_PER_CLUSTER, trustSpecDigests: true };
    // The first scenario run would otherwise also pay for compiling the library and for the heap
    // growing to its working size: every scenario's code path runs first on small clusters.
    const warmupCalls = ctx.quick ? 100 : 3_000;
    ctx.progress.start('warm-up on 10 and 100 nodes', warmupCalls * chains.length * operations.length);
    for (const c of chains) {
      for (const op of operations) {
        for (const nodes of [10, 100]) {
          const text = JSON.stringify(buildSnapshot({ nodes, chain: c, op }));
          for (let i = 0; i < warmupCalls / 2; i++) evaluate(JSON.parse(text) as EvaluationInput, options);
          ctx.progress.tick(warmupCalls / 2);
        }
      }
    }
    ctx.progress.end('done');

    const results: ScenarioResult[] = [];
    for (const nodes of sizes) {
      const it = plans[nodes];
      for (const c of chains) {
        for (const op of operations) {
          const s: Scenario = { nodes, chain: c, op };
          // The stored snapshots: every call parses its own copy, so no object is ever seen twice.
          const full = buildSnapshot(s);
          const text = JSON.stringify(full);
          const whole = () => JSON.parse(text) as EvaluationInput;
          const summarised = summarisedSnapshot(full);
          const summaryText = JSON.stringify(summarised.input);
          const fresh = () => JSON.parse(summaryText) as EvaluationInput;
          const { digest, zonePlan } = checkDecision(s, whole, options, fresh);
          checkPieces(registry, fresh, options, s);
          const steps = 2 * (it.samples + it.warmup) + (withBreakdown ? 6 * (it.breakdown + Math.ceil(it.breakdown / 5)) : 0);
          ctx.progress.start(scenarioLabel(s), steps);
          const evaluated = times(ctx.progress, it, fresh, (input) => evaluate(input, options));
          const wholeList = times(ctx.progress, it, whole, (input) => evaluate(input, options));
          const parts = withBreakdown ? breakdown(registry, fresh, evaluated.median, ctx.progress, it) : null;
          ctx.progress.end(`median ${formatNs(evaluated.median)}, p99 ${formatNs(evaluated.p99)} (whole list ${formatNs(wholeList.median)})`);
          results.push({
            scenario: s,
            count: operationCount(s),
            digest,
            evaluate: evaluated,
            whole: wholeList,
            listed: summarised.input.cluster!.nodes!.length,
            depth: summarised.depth,
            zonePlan,
            breakdown: parts,
          });
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }

    // Senlin's zone placement pre_op on the same snapshots (the nodes do not depend on the chain)
    const senlinScenarios: SenlinScenario[] = [];
    for (const nodes of sizes) {
      for (const op of operations) {
        const s: Scenario = { nodes, chain: 'zone', op };
        const snap = buildSnapshot(s);
        senlinScenarios.push({
          key: senlinKey(nodes, op),
          zones: ZONES,
          node_zones: (snap.cluster?.nodes ?? []).map((n) => String(n.data?.placement?.zone)),
          action: isScaleOut(op) ? 'CLUSTER_SCALE_OUT' : 'CLUSTER_SCALE_IN',
          count: operationCount(s),
          samples: plans[nodes].samples,
          warmup: plans[nodes].warmup,
        });
      }
    }
    ctx.progress.start("Senlin's zone placement pre_op (python3-senlin) on the same snapshots", 1);
    const senlin = runSenlin(ctx.root, senlinScenarios, sizes);
    ctx.progress.end(senlin.ok ? `done (${senlin.python})` : `skipped: ${senlin.why}`);

    const figures = results.map((r) => ({
      nodes: r.scenario.nodes,
      chain: r.scenario.chain,
      operation: r.scenario.op,
      nodes_changed: r.count,
      decision_digest: r.digest,
      evaluate_us: inMicroseconds(r.evaluate),
      whole_node_list_us: inMicroseconds(r.whole),
      nodes_listed: r.listed,
      listed_per_zone: r.depth,
      zone_plan: r.zonePlan,
      breakdown_median_us: r.breakdown && {
        spec_resolution: us(r.breakdown.policies),
        hooks: Object.fromEntries(Object.entries(r.breakdown.hooks).map(([k, v]) => [k, us(v)])),
        chain: us(r.breakdown.chain),
        chain_bookkeeping: us(r.breakdown.bookkeeping),
        engine_plan: us(r.breakdown.plan),
        rest: us(r.breakdown.other),
        samples_per_piece: r.breakdown.samples,
      },
    }));
    const growth = results
      .filter((r) => r.scenario.nodes !== sizes[0])
      .map((r) => {
        const prev = results.find((p) => p.scenario.chain === r.scenario.chain && p.scenario.op === r.scenario.op && p.scenario.nodes * 10 === r.scenario.nodes);
        return {
          chain: r.scenario.chain,
          operation: r.scenario.op,
          from_nodes: prev?.scenario.nodes ?? null,
          to_nodes: r.scenario.nodes,
          median_ratio: prev ? Math.round((r.evaluate.median / prev.evaluate.median) * 100) / 100 : null,
        };
      });

    const checks = [...targets(results), ...senlinTargets(results, senlin)];
    const senlinFigures = senlin.ok
      ? {
          python: senlin.python,
          method: 'bench/senlin/zone_preop_snapshots.py: ZonePlacementPolicy.pre_op with Cluster.load and Nova mocked, time.perf_counter per call, same nodes, zones, weights and counts',
          scenarios: [...senlin.figures.values()].map((f) => ({ key: f.key, median_us: us(f.median_ns), p99_us: us(f.p99_ns), samples: f.samples, plan: f.plan })),
          shared_script_output: senlin.anchor,
        }
      : { skipped: senlin.why };
    return {
      parameters: {
        sizes,
        chains: chains.map((c) => CHAIN_LABELS[c]),
        operations: operations.map((o) => OPERATION_LABELS[o]),
        iterations: Object.fromEntries(sizes.map((n) => [n, plans[n]])),
        breakdown: withBreakdown,
        max_nodes_per_cluster: MAX_NODES_PER_CLUSTER,
        fresh_input: 'JSON.parse of the stored snapshot text before each timed call (untimed)',
        global_warmup: 'every chain and operation on 10 and 100 nodes before the first timed scenario',
        timer: 'process.hrtime.bigint() around each call',
        zones: 'az1 weight 100, az2 weight 100, az3 weight 50; every node ACTIVE',
        deletion_criteria: 'OLDEST_FIRST (full chain); youngest first per zone (zone placement alone: the engine plan picks)',
      },
      figures: { scenarios: figures, growth, senlin: senlinFigures },
      tables: [...tables(results, sizes, chains, operations), ...senlinTable(results, senlin)],
      skipped: senlin.ok ? [] : [{ what: "Senlin's zone placement pre_op, and the ratios", why: senlin.why }],
      targets: checks,
      notes: [
        ...(senlin.ok ? [`Senlin's own script, as it stands (its 4-zone cluster): ${senlin.anchor.join(' | ')}`] : []),
        "loading the decision's input from PostgreSQL is timed by the snapshot-load benchmark (npm run bench -- --only snapshot-load)",
        ...(ctx.quick ? ['quick smoke: 10 and 100 nodes with few samples; the targets are at 1,000 and 10,000 nodes and are not checked'] : []),
      ],
    };
  },
});
