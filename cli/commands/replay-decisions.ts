import { DecisionEntity } from '@trellis/persistence';
import { evaluate, type PolicyRegistry } from '@trellis/policies';
import { MoreThanOrEqual, type DataSource } from 'typeorm';

export interface DecisionReplayReport {
  checked: number;
  differing: Array<{ action_id: string; hook: string; stored: unknown; now: unknown }>;
}

/** ids of objects a hook created are fresh on every evaluation; compare decisions without them */
const withoutRefs = (v: unknown) => JSON.parse(JSON.stringify(v ?? null).replace(/"ref:[^"]*"/g, '"ref"'));

const comparable = (out: Record<string, unknown>) =>
  withoutRefs({ status: out.status, reason: out.reason, data: out.data, plan: out.plan, ok: out.ok, message: out.message });

/**
 * `trellis replay --decisions`: every stored decision is a pure function of its snapshot, so the
 * current code must decide the same; any that differ are listed (for upgrades and audits).
 */
export async function replayDecisions(
  dataSource: DataSource,
  registry: PolicyRegistry,
  options: { since?: string },
): Promise<DecisionReplayReport> {
  const where = options.since ? { created_at: MoreThanOrEqual(parseSince(options.since)) } : {};
  const decisions = await dataSource.getRepository(DecisionEntity).find({ where, order: { created_at: 'ASC' } });
  const report: DecisionReplayReport = { checked: 0, differing: [] };
  for (const d of decisions) {
    const hook = (d.input as { hook?: string } | null)?.hook;
    if (!hook || hook === 'none') continue;
    report.checked++;
    const stored = comparable(d.output);
    const now = comparable(evaluate(d.input as never, { registry }) as unknown as Record<string, unknown>);
    if (canonical(stored) !== canonical(now)) report.differing.push({ action_id: d.action_id, hook: d.hook, stored, now });
  }
  return report;
}

/** JSON with keys in one order: jsonb does not keep the order the engine wrote them in */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function parseSince(since: string): Date {
  const d = new Date(since);
  if (Number.isNaN(d.getTime())) throw new Error(`--since must be an ISO date or time, got '${since}'`);
  return d;
}
