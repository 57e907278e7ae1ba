import type { Metric } from 'prom-client';

/**
 * For tests: the value of a counter or gauge (a histogram's count) for the series whose labels
 * include `labels`, summed; 0 when there is none. Read before and after to see what moved.
 */
export async function metricValue(metric: Metric, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  const histogram = values.some((v) => 'metricName' in v && String(v.metricName).endsWith('_count'));
  return values
    .filter((v) => !histogram || String((v as { metricName?: string }).metricName).endsWith('_count'))
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}
