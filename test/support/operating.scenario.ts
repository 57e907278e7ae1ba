import { ApiClient } from './api-client';

/**
 * Issue 13, written once for the embedded default (test/e2e/operating.e2e-spec.ts) and for the
 * services as separate processes on RabbitMQ + PostgreSQL (test/integration/operating.int-spec.ts):
 * what an operator sees of one scale-out in the metrics and in the logs.
 */

/** One sample of Prometheus's text format: `name{label="value",…} 12`. */
export type Samples = Map<string, number>;

const key = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`)
    .join(',')}}`;

/** Parses an exposition (no escaped quotes in Trellis's label values: they are fixed words). */
export function parseMetrics(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[k] = v;
    samples.set(key(m[1], labels), Number(m[3]));
  }
  return samples;
}

/** A sample's value, 0 when the series does not exist (yet). */
export const sample = (samples: Samples, name: string, labels: Record<string, string> = {}): number => samples.get(key(name, labels)) ?? 0;

export async function scrape(url: string): Promise<Samples> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${url}/metrics: ${res.status}`);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return parseMetrics(await res.text());
}

/** How much each sample moved between two scrapes. */
export function moved(before: Samples, after: Samples, name: string, labels: Record<string, string> = {}): number {
  return sample(after, name, labels) - sample(before, name, labels);
}

export interface ScaledOut {
  clusterId: string;
  actionId: string;
  /** the 202's x-openstack-request-id */
  requestId: string;
}

/** A scale-out of `count` that must succeed; what the 202 said. */
export async function scaleOutAndWait(api: ApiClient, clusterId: string, count: number): Promise<ScaledOut> {
  const res = await api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count } });
  expect(res.status).toBe(202);
  const requestId = res.headers.get('x-openstack-request-id');
  expect(requestId).toMatch(/^req-[0-9a-f-]{36}$/);
  const actionId = ApiClient.actionIdOf(res);
  expect((await api.waitForAction(actionId)).status).toBe('SUCCEEDED');
  return { clusterId, actionId, requestId: requestId! };
}

/**
 * The counters a successful scale-out of `count` servers moves, wherever they are served: in the
 * embedded default all on the gateway's /metrics, else each on its own service's.
 */
export function expectScaleOutCounted(
  count: number,
  moves: { gateway: (name: string, labels?: Record<string, string>) => number; engine: typeof moves.gateway; worker: typeof moves.gateway },
): void {
  const { gateway, engine, worker } = moves;
  expect(gateway('trellis_actions_accepted_total', { action: 'CLUSTER_SCALE_OUT' })).toBe(1);
  expect(engine('trellis_actions_finished_total', { action: 'CLUSTER_SCALE_OUT', outcome: 'SUCCEEDED' })).toBe(1);
  expect(engine('trellis_action_duration_seconds_count', { action: 'CLUSTER_SCALE_OUT', outcome: 'SUCCEEDED' })).toBe(1);
  // a cluster without policies: the chain is empty, but the pre_op hook is still evaluated
  expect(engine('trellis_decision_duration_seconds_count', { hook: 'pre_op', chain_length: '0' })).toBe(1);
  expect(engine('trellis_messages_consumed_total', { queue: 'trellis.policy-engine.actions', outcome: 'ack' })).toBe(1);
  expect(engine('trellis_messages_consumed_total', { queue: 'trellis.policy-engine.results', outcome: 'ack' })).toBe(1);
  expect(worker('trellis_messages_consumed_total', { queue: 'trellis.nova-worker.orders', outcome: 'ack' })).toBe(1);
  expect(worker('trellis_openstack_requests_total', { service: 'compute', operation: 'servers.create', status_class: '2xx' })).toBe(count);
  expect(worker('trellis_openstack_request_duration_seconds_count', { service: 'compute', operation: 'servers.create' })).toBe(count);
  expect(worker('trellis_openstack_requests_total', { service: 'compute', operation: 'servers.get', status_class: '2xx' })).toBeGreaterThanOrEqual(count);
}

/** The outbox gauges, read from the database at the scrape. */
export function expectOutboxGauges(samples: Samples): void {
  expect(samples.has('trellis_outbox_pending_messages{}')).toBe(true);
  expect(samples.has('trellis_outbox_oldest_pending_age_seconds{}')).toBe(true);
  expect(samples.has('trellis_outbox_set_aside_messages{}')).toBe(true);
}

/**
 * The deployment gauges, read from the shared tables at the scrape: every unfinished status listed
 * (nothing left running after the scale-out), and a gateway, a policy-engine and a nova-worker up.
 */
export function expectDeploymentGauges(samples: Samples): void {
  for (const status of ['READY', 'WAITING', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION']) {
    expect(samples.get(`trellis_actions_unfinished{status="${status}"}`)).toBe(0);
  }
  for (const binary of ['trellis-gateway', 'trellis-policy-engine', 'trellis-nova-worker']) {
    expect(sample(samples, 'trellis_components', { binary, state: 'up' })).toBeGreaterThanOrEqual(1);
    expect(samples.has(`trellis_components{binary="${binary}",state="down"}`)).toBe(true);
  }
}

/** Node's process metrics, which a service's entry point turns on. */
export function expectProcessMetrics(samples: Samples): void {
  expect(sample(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  expect(sample(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
}

export type LogLine = Record<string, unknown> & { msg: string };

/** JSON log lines out of captured output (anything else, such as a stack trace, is skipped). */
export function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as LogLine];
      } catch {
        return [];
      }
    });
}

/**
 * What `grep <request id>` over every service's log shows of the scale-out: the gateway's answer,
 * the engine's decision and result, the worker's order, and Nova's API log with the id as the
 * global request id of the servers it was asked to boot. Every line about the action carries it.
 */
export function expectOneStory(logs: { gateway: LogLine[]; engine: LogLine[]; worker: LogLine[]; nova: LogLine[] }, s: ScaledOut, count: number): void {
  const withId = (lines: LogLine[]) => lines.filter((l) => l.correlation_id === s.requestId);
  const messages = (lines: LogLine[]) => withId(lines).map((l) => l.msg);

  expect(withId(logs.gateway)).toContainEqual(
    expect.objectContaining({ msg: 'request answered', method: 'POST', path: `/v1/clusters/${s.clusterId}/actions`, status: 202 }),
  );
  expect(messages(logs.engine)).toEqual(expect.arrayContaining(['action handled', 'work result applied']));
  expect(messages(logs.worker)).toContain('work order applied');
  const novaCalls = logs.nova.filter((l) => l.global_request_id === s.requestId).map((l) => `${l.method} ${String(l.path).replace(/[0-9a-f-]{36}$/, '{id}')}`);
  expect(novaCalls.filter((c) => c === 'POST /compute/v2.1/servers')).toHaveLength(count);
  expect(novaCalls).toContain('GET /compute/v2.1/servers/{id}');

  const aboutTheAction = [...logs.gateway, ...logs.engine, ...logs.worker].filter((l) => l.action_id === s.actionId);
  expect(aboutTheAction.length).toBeGreaterThanOrEqual(3);
  expect(aboutTheAction.filter((l) => l.correlation_id !== s.requestId)).toEqual([]);
}
