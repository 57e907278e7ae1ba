import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Senlin's own zone placement pre_op (Debian's python3-senlin), timed in the same benchmark run on
 * the same snapshots: bench/senlin/zone_preop_snapshots.py, the method of the shared
 * senlin-zone-preop.py with the benchmark's nodes, zones and counts. The interpreter is
 * TRELLIS_BENCH_SENLIN_PYTHON (default /usr/bin/python3, where apt installs the package).
 */

export interface SenlinScenario {
  key: string;
  zones: Array<{ name: string; weight: number }>;
  node_zones: string[];
  action: 'CLUSTER_SCALE_OUT' | 'CLUSTER_SCALE_IN';
  count: number;
  samples: number;
  warmup: number;
}

export interface SenlinFigure {
  key: string;
  median_ns: number;
  p99_ns: number;
  samples: number;
  /** Senlin's zone plan: `creation.zones` or `deletion.zones` */
  plan: Record<string, number>;
}

export type SenlinRun = { ok: true; python: string; figures: Map<string, SenlinFigure>; anchor: string[] } | { ok: false; why: string };

export function senlinPython(): string {
  return process.env.TRELLIS_BENCH_SENLIN_PYTHON || '/usr/bin/python3';
}

export function runSenlin(root: string, scenarios: SenlinScenario[], anchorSizes: number[]): SenlinRun {
  const python = senlinPython();
  const probe = spawnSync(python, ['-c', 'import senlin.policies.zone_placement'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return { ok: false, why: `${python} cannot import senlin (apt-get install python3-senlin): ${(probe.error?.message ?? probe.stderr).trim().split('\n').pop()}` };
  }
  const script = path.join(root, 'bench', 'senlin', 'zone_preop_snapshots.py');
  const run = spawnSync(python, [script], { input: JSON.stringify(scenarios), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error || run.status !== 0) return { ok: false, why: `${script} failed: ${(run.error?.message ?? run.stderr).trim()}` };
  const figures = new Map<string, SenlinFigure>();
  for (const line of run.stdout.split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as { key: string; median_us: number; p99_us: number; samples: number; plan: Record<string, number> };
    figures.set(r.key, { key: r.key, median_ns: r.median_us * 1e3, p99_ns: r.p99_us * 1e3, samples: r.samples, plan: r.plan });
  }
  const missing = scenarios.filter((s) => !figures.has(s.key)).map((s) => s.key);
  if (missing.length) return { ok: false, why: `${script} gave no figure for ${missing.join(', ')}` };
  // the shared anchor script, as it stands (its own 4-zone cluster), when it is there
  const shared = path.resolve(root, '..', 'shared', 'bench', 'senlin-zone-preop.py');
  let anchor: string[] = [];
  if (fs.existsSync(shared)) {
    const a = spawnSync(python, [shared, ...anchorSizes.map(String)], { encoding: 'utf8' });
    anchor = a.status === 0 ? a.stdout.split('\n').filter(Boolean) : [`${shared} failed: ${a.stderr.trim().split('\n').pop()}`];
  }
  return { ok: true, python, figures, anchor };
}
