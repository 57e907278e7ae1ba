import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REASON_CLASSES, metricsRegistry, statusClass } from '@trellis/observability/metrics';

/**
 * deploy/prometheus/trellis-alerts.yml names only metrics, labels and label values Trellis exposes,
 * and its annotations only labels its expressions keep: a renamed metric or label fails here, not
 * silently in an operator's Prometheus (an alert on a series that does not exist never fires).
 */
const ROOT = join(__dirname, '..', '..');
const FILE = join(ROOT, 'deploy', 'prometheus', 'trellis-alerts.yml');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Labels Prometheus adds to every series of README's scrape job (`job`, `instance`) and its targets' own (`component`). */
const TARGET_LABELS = ['job', 'instance', 'component'];
/** Values a label takes, where Trellis fixes them. */
const VALUES: Record<string, readonly string[]> = {
  // finishAction's statuses
  outcome: ['SUCCEEDED', 'FAILED', 'CANCELLED'],
  status_class: [200, 302, 404, 503, null].map(statusClass),
  reason: REASON_CLASSES,
  lease: ['action', 'work_order', 'node'],
  job: ['trellis'],
};
const HISTOGRAM_SERIES = /_(bucket|sum|count)$/;

function metric(name: string): { labels: string[]; histogram: boolean } | null {
  const direct = metricsRegistry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
  if (direct) return { labels: [...(direct.labelNames ?? [])], histogram: false };
  const base = metricsRegistry.getSingleMetric(name.replace(HISTOGRAM_SERIES, '')) as unknown as { labelNames?: string[]; constructor: { name: string } } | undefined;
  if (base && HISTOGRAM_SERIES.test(name) && base.constructor.name === 'Histogram') return { labels: [...(base.labelNames ?? []), 'le'], histogram: true };
  return null;
}

function selectors(expr: string): Array<{ name: string; matchers: Array<{ label: string; op: string; value: string }> }> {
  const out: Array<{ name: string; matchers: Array<{ label: string; op: string; value: string }> }> = [];
  for (const m of expr.matchAll(/\b(trellis_[a-z0-9_]+|up)\b(\{([^}]*)\})?/g)) {
    const matchers = [...(m[3] ?? '').matchAll(/([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map((x) => ({ label: x[1], op: x[2], value: x[3] }));
    out.push({ name: m[1], matchers });
  }
  return out;
}

const byLabels = (expr: string): string[][] => [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].map((m) => m[1].split(',').map((l) => l.trim()).filter(Boolean));
const templateLabels = (text: string): string[] => [...text.matchAll(/\$labels\.([a-z_]+)/g)].map((m) => m[1]);

describe('Prometheus alerting rules (deploy/prometheus/trellis-alerts.yml)', () => {
  const doc = parse(readFileSync(FILE, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
  const rules = doc.groups.flatMap((g) => g.rules);

  it('is one group of alerts, each named, with an expression, a severity, a summary and a description', () => {
    expect(doc.groups.map((g) => g.name)).toEqual(['trellis']);
    expect(rules.length).toBeGreaterThanOrEqual(6);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(r.alert).toMatch(/^Trellis[A-Z][A-Za-z]+$/);
      expect(typeof r.expr).toBe('string');
      expect(['critical', 'warning', 'info']).toContain(r.labels?.severity);
      expect(r.annotations?.summary?.length).toBeGreaterThan(10);
      expect(r.annotations?.description?.length).toBeGreaterThan(20);
      if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
    }
  });

  it('names only metrics and labels Trellis exposes, and label values it writes', () => {
    const problems: string[] = [];
    for (const r of rules) {
      const used = selectors(r.expr);
      if (!used.some((s) => s.name.startsWith('trellis_') || s.name === 'up')) problems.push(`${r.alert}: no metric`);
      const known = new Set<string>(TARGET_LABELS);
      for (const s of used) {
        const m = s.name === 'up' ? { labels: [], histogram: false } : metric(s.name);
        if (!m) {
          problems.push(`${r.alert}: ${s.name} is not a Trellis metric`);
          continue;
        }
        m.labels.forEach((l) => known.add(l));
        for (const { label, op, value } of s.matchers) {
          if (!TARGET_LABELS.includes(label) && !m.labels.includes(label)) problems.push(`${r.alert}: ${s.name} has no label ${label}`);
          const allowed = VALUES[label];
          if (!allowed) continue;
          const values = op.endsWith('~') ? value.split('|') : [value];
          for (const v of values) if (!allowed.includes(v)) problems.push(`${r.alert}: ${label}="${v}" is never written (${allowed.join(', ')})`);
        }
      }
      for (const labels of byLabels(r.expr)) for (const l of labels) if (!known.has(l)) problems.push(`${r.alert}: by (${l}): no such label`);
    }
    expect(problems).toEqual([]);
  });

  it('fills its annotations only with labels the expression keeps', () => {
    const problems: string[] = [];
    for (const r of rules) {
      const aggregated = /\b(sum|max|min|avg|count)\b\s*(by\s*\([^)]*\)\s*)?\(/.test(r.expr);
      const kept = new Set(aggregated ? byLabels(r.expr).reduce<string[]>((a, b) => (a.length === 0 ? b : a.filter((l) => b.includes(l))), []) : [...TARGET_LABELS, ...selectors(r.expr).flatMap((s) => metric(s.name)?.labels ?? [])]);
      // histogram_quantile drops le
      kept.delete('le');
      for (const text of Object.values(r.annotations)) for (const l of templateLabels(text)) if (!kept.has(l)) problems.push(`${r.alert}: $labels.${l} is not kept by ${r.expr.replace(/\s+/g, ' ')}`);
    }
    expect(problems).toEqual([]);
  });

  it("matches README's scrape job: job trellis, a component label per target, which no metric's own label shadows", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /```yaml\n# prometheus\.yml\n([\s\S]*?)```/.exec(readme);
    expect(block).not.toBeNull();
    const config = parse(block![1]) as { scrape_configs: Array<{ job_name: string; static_configs: Array<{ labels: Record<string, string> }> }> };
    expect(config.scrape_configs.map((c) => c.job_name)).toEqual(['trellis']);
    expect(config.scrape_configs[0].static_configs.map((s) => s.labels.component)).toEqual(['gateway', 'policy-engine', 'nova-worker']);
    // a target label of the same name as a metric's would rename the metric's to exported_<name>
    // (trellis_openstack_requests_total's `service` is Keystone, Nova…; the target's was once `service` too)
    const clashes = metricsRegistry
      .getMetricsAsArray()
      .flatMap((m) => ((m as unknown as { labelNames?: string[] }).labelNames ?? []).filter((l) => TARGET_LABELS.includes(l)).map((l) => `${m.name}: ${l}`));
    expect(clashes).toEqual([]);
  });
});
