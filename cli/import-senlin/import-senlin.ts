import type { DataSource } from 'typeorm';
import { applyUnit, existingIds, type UnitResult } from './import-apply';
import { SENLIN_SERVICE_DEAD_AFTER_S, planImport, serversToRead, type ImportOptions, type ImportPlan, type ImportUnit, type LeftOut, type SenlinServiceState } from './import-plan';
import { lookUpServers, type ServerReader } from './nova-lookup';
import type { SenlinRows } from './senlin-rows';

export interface ImportRun extends ImportOptions {
  dryRun: boolean;
}

/** What one run did (or, in a dry run, would do): the report both the text and the --json output are made of. */
export interface ImportReport {
  dry_run: boolean;
  /** set when nothing was imported because Senlin's engine is running */
  refused: string | null;
  senlin: { read_at: string; services: SenlinServiceState[]; engine_alive: boolean };
  units: UnitReport[];
  left_out: LeftOut[];
  totals: Record<'profiles' | 'policies' | 'clusters' | 'nodes' | 'bindings' | 'receivers', number>;
  /** 'nothing new': every selected object is already in Trellis */
  outcome: 'imported' | 'would import' | 'nothing new' | 'refused' | 'partial' | 'failed';
}

export interface UnitReport {
  kind: ImportUnit['kind'];
  id: string;
  name: string | null;
  project: string | null;
  state: 'new' | 'present' | 'blocked' | 'imported' | 'failed';
  blockers: string[];
  notes: string[];
  error?: string;
  unfinished_actions: ImportUnit['unfinished_actions'];
  profiles: Array<{ id: string; name: string; type: string }>;
  policies: Array<{ id: string; name: string; type: string }>;
  nodes: Array<{ id: string; name: string; index: number; physical_id: string | null; status: string; zone: string | null; host: string | null }>;
  bindings: Array<{ id: string; policy_id: string; priority: number; enabled: boolean; data: Record<string, unknown> }>;
  receivers: Array<{ id: string; name: string; action: string | null; alarm_url: string | null }>;
}

/**
 * `trellis import-senlin` without its I/O edges: Senlin's rows, Nova (read-only) and Trellis's
 * database are handed in, so the same code runs from the command, the integration test and the
 * end-to-end test.
 */
export async function importSenlin(rows: SenlinRows, run: ImportRun, nova: ServerReader, trellis: DataSource): Promise<ImportReport> {
  const servers = await lookUpServers(nova, serversToRead(rows, run));
  const plan = planImport(rows, run, await existingIds(trellis, rows), servers);
  const report = reportOf(plan, run.dryRun);
  if (run.dryRun) return finish(report, null);
  if (plan.senlin.engine_alive) {
    const engines = plan.senlin.services.filter((s) => s.binary === 'senlin-engine' && s.alive);
    return finish(
      report,
      `Senlin's engine is running (${engines.map((s) => `${s.binary} ${s.id} on ${s.host}, last report ${s.silent_for_s} s ago`).join('; ')}): ` +
        `stop every senlin-engine before importing, so that Senlin does not act on the clusters Trellis takes over ` +
        `(a stopped engine removes its row from Senlin's service table; a killed one counts as stopped ${SENLIN_SERVICE_DEAD_AFTER_S} s after its last report).`,
    );
  }
  const results: UnitResult[] = [];
  for (const [i, unit] of plan.units.entries()) {
    if (unit.state !== 'new') continue;
    const result = await applyUnit(trellis, unit);
    results.push(result);
    const r = report.units[i];
    if (result.outcome === 'imported') r.state = 'imported';
    else if (result.outcome === 'already-present') r.state = 'present';
    else {
      r.state = 'failed';
      r.error = result.error;
    }
    for (const [k, v] of Object.entries(result.inserted)) report.totals[k as keyof ImportReport['totals']] += v;
  }
  return finish(report, null);
}

function finish(report: ImportReport, refused: string | null): ImportReport {
  report.refused = refused;
  if (refused) {
    report.outcome = 'refused';
    return report;
  }
  if (report.dry_run) {
    for (const u of report.units) {
      if (u.state !== 'new') continue;
      report.totals.profiles += u.profiles.length;
      report.totals.policies += u.policies.length;
      report.totals.clusters += u.kind === 'cluster' ? 1 : 0;
      report.totals.nodes += u.nodes.length;
      report.totals.bindings += u.bindings.length;
      report.totals.receivers += u.receivers.length;
    }
  }
  const total = Object.values(report.totals).reduce((a, b) => a + b, 0);
  const blocked = report.units.some((u) => u.state === 'blocked');
  if (report.units.some((u) => u.state === 'failed')) report.outcome = 'failed';
  else if (blocked || report.left_out.length) report.outcome = 'partial';
  else if (total === 0) report.outcome = 'nothing new';
  else report.outcome = report.dry_run ? 'would import' : 'imported';
  return report;
}

function reportOf(plan: ImportPlan, dryRun: boolean): ImportReport {
  return {
    dry_run: dryRun,
    refused: null,
    senlin: plan.senlin,
    left_out: plan.left_out,
    totals: { profiles: 0, policies: 0, clusters: 0, nodes: 0, bindings: 0, receivers: 0 },
    outcome: 'would import',
    units: plan.units.map((u) => ({
        kind: u.kind,
        id: u.id,
        name: u.name,
        project: u.project,
        state: u.state,
        blockers: u.blockers,
        notes: u.notes,
        unfinished_actions: u.unfinished_actions,
        profiles: u.rows.profiles.map((p) => ({ id: p.id, name: p.name, type: p.type })),
        policies: u.rows.policies.map((p) => ({ id: p.id, name: p.name, type: p.type })),
        nodes: u.rows.nodes.map((n) => {
          const placement = (n.data.placement ?? {}) as { zone?: string; host?: string };
          return { id: n.id, name: n.name, index: n.index, physical_id: n.physical_id, status: n.status, zone: placement.zone ?? null, host: placement.host ?? null };
        }),
        bindings: u.rows.bindings.map((b) => ({ id: b.id, policy_id: b.policy_id, priority: b.priority, enabled: b.enabled, data: b.data })),
        receivers: u.rows.receivers.map((r) => ({ id: r.id, name: r.name, action: r.action, alarm_url: typeof r.channel.alarm_url === 'string' ? r.channel.alarm_url : null })),
    })),
  };
}
