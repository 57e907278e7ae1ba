import type { ImportReport, UnitReport } from './import-senlin';

const STATE_WORDS: Record<UnitReport['state'], (dry: boolean) => string> = {
  new: (dry) => (dry ? 'would be imported' : 'to import'),
  present: () => 'already in Trellis: nothing to do',
  blocked: () => 'NOT IMPORTED',
  imported: () => 'imported',
  failed: () => 'FAILED (rolled back)',
};

/** The report as an operator reads it: one block per cluster, then what is left out and why. */
export function renderReport(report: ImportReport, source: string): string {
  const out: string[] = [];
  out.push(`Senlin database ${source}, read at ${report.senlin.read_at}`);
  for (const s of report.senlin.services) {
    out.push(`  service ${s.binary} on ${s.host ?? '?'} (${s.id}): ${s.alive ? 'RUNNING' : 'stopped'}${s.silent_for_s === null ? '' : `, last report ${s.silent_for_s} s ago`}`);
  }
  if (!report.senlin.services.some((s) => s.binary === 'senlin-engine')) out.push("  no senlin-engine in Senlin's service table (stopped)");
  if (report.senlin.services.some((s) => s.binary === 'senlin-health-manager' && s.alive)) {
    out.push('  senlin-health-manager is running: stop it too, or it keeps starting recover actions in Senlin');
  }
  if (report.dry_run) {
    out.push('', 'DRY RUN: nothing is written to Trellis or Senlin; Nova is only read.');
    if (report.senlin.engine_alive) out.push("A senlin-engine is running: the import itself is refused until every senlin-engine is stopped.");
  }
  for (const u of report.units) {
    if (u.kind === 'profiles-and-policies' && u.state === 'present') continue;
    out.push('');
    const what = u.kind === 'cluster' ? 'cluster' : u.kind === 'node' ? 'standalone node' : '';
    out.push(`${what ? `${what} ` : ''}${u.name ?? ''} (${u.id})${u.project ? ` project ${u.project}` : ''}: ${STATE_WORDS[u.state](report.dry_run)}`);
    for (const b of u.blockers) out.push(`  why not: ${b}`);
    if (u.error) out.push(`  error: ${u.error}`);
    for (const p of u.profiles) out.push(`  profile ${p.name} (${p.id}) ${p.type}`);
    for (const p of u.policies) out.push(`  policy ${p.name} (${p.id}) ${p.type}`);
    for (const n of u.nodes) {
      const where = n.zone || n.host ? ` in ${n.zone ?? '?'} on ${n.host ?? '?'}` : '';
      out.push(`  node ${n.name} (${n.id}) index ${n.index} ${n.status} server ${n.physical_id ?? '-'}${where}`);
    }
    for (const b of u.bindings) out.push(`  binding ${b.id} of policy ${b.policy_id} priority ${b.priority}${b.enabled ? '' : ' (disabled)'} data ${describeBindingData(b.data)}`);
    for (const r of u.receivers) out.push(`  receiver ${r.name} (${r.id}) ${r.action ?? ''} ${r.alarm_url ?? ''}`.trimEnd());
    for (const a of u.unfinished_actions) out.push(`  unfinished Senlin action ${a.action ?? a.name} ${a.id} ${a.status} (not imported)`);
    for (const n of u.notes) out.push(`  note: ${n}`);
  }
  if (report.left_out.length) {
    out.push('', 'Not carried over:');
    for (const l of report.left_out) out.push(`  ${l.kind} ${l.name ?? ''} (${l.id})${l.project ? ` project ${l.project}` : ''}: ${l.reason}`);
  }
  out.push('');
  if (report.refused) out.push(`REFUSED: ${report.refused}`);
  const t = report.totals;
  const counts = `${t.clusters} cluster(s), ${t.nodes} node(s), ${t.profiles} profile(s), ${t.policies} polic(ies), ${t.bindings} binding(s), ${t.receivers} receiver(s)`;
  switch (report.outcome) {
    case 'nothing new':
      out.push('Nothing new to import: everything selected is already in Trellis.');
      break;
    case 'would import':
      out.push(`Would import ${counts}.`);
      break;
    case 'imported':
      out.push(`Imported ${counts}.`);
      break;
    case 'partial':
      out.push(`${report.dry_run ? 'Would import' : 'Imported'} ${counts}; some objects are not carried over (above).`);
      break;
    case 'failed':
      out.push(`Imported ${counts}; some units failed and were rolled back (above).`);
      break;
    case 'refused':
      break;
  }
  return out.join('\n') + '\n';
}

/** Senlin's wrapped binding data, shortened: `AffinityPolicy 1.0 {servergroup_id: …, inherited_group: false}` */
function describeBindingData(data: Record<string, unknown>): string {
  const parts = Object.entries(data).map(([key, value]) => {
    const v = value as { version?: unknown; data?: unknown } | null;
    return v && typeof v === 'object' && 'data' in v ? `${key} ${String(v.version)} ${JSON.stringify(v.data)}` : `${key} ${JSON.stringify(value)}`;
  });
  return parts.length ? parts.join('; ') : '{}';
}
