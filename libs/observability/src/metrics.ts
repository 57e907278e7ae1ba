import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Trellis's Prometheus metrics, defined once for every service. A process has one registry: the
 * embedded default (gateway, engine and worker in one process) serves it once, on the gateway's
 * `/metrics`; a service on its own serves its own. Label values come from small fixed sets (action
 * types, queue names, operations, status classes, reason classes), never ids or names, so the
 * number of series stays bounded whatever the traffic.
 */
export const metricsRegistry = new Registry();

const registers = [metricsRegistry];

/** Why a message was retried or dead-lettered, as a bounded class (the reason text is in the log and the DLQ header). */
export const REASON_CLASSES = ['invalid', 'rejected', 'transient', 'unexpected', 'delivery_limit', 'unclassified'] as const;
export type ReasonClass = (typeof REASON_CLASSES)[number];

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers });

const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
  new Histogram<L>({ name, help, labelNames, buckets, registers });

export const actionsAccepted = counter(
  'trellis_actions_accepted_total',
  'Actions stored READY by the gateway (a 202, an RPC reply or a webhook), by action type',
  ['action'],
);

export const actionsFinished = counter(
  'trellis_actions_finished_total',
  'Actions that ended, by action type and outcome (SUCCEEDED, FAILED, CANCELLED)',
  ['action', 'outcome'],
);

export const actionDuration = histogram(
  'trellis_action_duration_seconds',
  'Time from an action being accepted to its end, by action type and outcome',
  ['action', 'outcome'],
  [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
);

export const decisionDuration = histogram(
  'trellis_decision_duration_seconds',
  "Time the policy-engine spent evaluating one policy hook over a cluster's chain, by hook and chain length",
  ['hook', 'chain_length'],
  [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
);

export const openstackRequests = counter(
  'trellis_openstack_requests_total',
  'HTTP requests to OpenStack (Keystone, Nova, Glance, Neutron), each try counted, by service, operation and status class',
  ['service', 'operation', 'status_class'],
);

export const openstackRequestDuration = histogram(
  'trellis_openstack_request_duration_seconds',
  'Latency of one HTTP request to OpenStack, by service and operation',
  ['service', 'operation'],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
);

export const messagesConsumed = counter(
  'trellis_messages_consumed_total',
  'Messages handled by a consumer, by queue and what became of them (ack, retry, dead_letter)',
  ['queue', 'outcome'],
);

export const messageRetries = counter(
  'trellis_message_retries_total',
  'Messages given back to their queue to be tried again, by queue and reason class',
  ['queue', 'reason'],
);

export const messagesDeadLettered = counter(
  'trellis_messages_dead_lettered_total',
  'Messages moved to their dead-letter queue, by queue and reason class',
  ['queue', 'reason'],
);

export const leaseTakeovers = counter(
  'trellis_lease_takeovers_total',
  'Work taken over after its holder let the lease run out (action: resumed by the engine; work_order, node: by a worker)',
  ['lease'],
);

export const buildPollLookups = counter(
  'trellis_build_poll_lookups_total',
  "Servers the nova-worker's build poller looked at, by way: list (one server list per owner and round) or get (one request each)",
  ['way'],
);

export const buildPollListed = counter(
  'trellis_build_poll_listed_servers_total',
  "Servers Nova returned to the build poller's lists, by list: whole (every server changed since the orders) or changes (only those changed since the last list)",
  ['list'],
);

export const duplicateServersDeleted = counter(
  'trellis_duplicate_servers_deleted_total',
  'Servers Nova made twice for one node (a create whose answer was lost) and the worker deleted once the node was ACTIVE',
  [],
);

/** What the outbox holds, read when the metrics are scraped. */
export interface OutboxFigures {
  pending: number;
  failing: number;
  oldestPendingAgeMs: number | null;
  /** rows set aside: they can never be published (larger than the broker takes) */
  setAside: number;
}

/**
 * One read per scrape of what `source()` names, shared by the gauges that show it (the registry
 * collects them at once); null when there is no source or the read fails: a metric must not fail
 * the scrape.
 */
function sharedRead<T>(source: () => (() => Promise<T>) | null): () => Promise<T | null> {
  let pending: Promise<T | null> | null = null;
  return () => {
    const read = source();
    if (!read) return Promise.resolve(null);
    pending ??= read()
      .catch(() => null)
      .finally(() => {
        pending = null;
      });
    return pending;
  };
}

let outboxSource: (() => Promise<OutboxFigures>) | null = null;
/** the outbox, once per scrape for its four gauges */
const readOutbox = sharedRead(() => outboxSource);

function outboxGauge(name: string, help: string, pick: (f: OutboxFigures) => number) {
  return new Gauge({
    name,
    help,
    registers,
    async collect() {
      const figures = await readOutbox();
      if (figures) this.set(pick(figures));
      else this.reset();
    },
  });
}

outboxGauge('trellis_outbox_pending_messages', 'Outbox rows committed and not yet published', (f) => f.pending);
outboxGauge('trellis_outbox_failing_messages', 'Outbox rows whose publishing failed at least once and that wait to be tried again', (f) => f.failing);
outboxGauge(
  'trellis_outbox_oldest_pending_age_seconds',
  'Age of the oldest outbox row not yet published (0 when none waits)',
  (f) => (f.oldestPendingAgeMs ?? 0) / 1000,
);
outboxGauge(
  'trellis_outbox_set_aside_messages',
  'Outbox rows set aside because they can never be published (larger than the message broker takes); kept 7 days',
  (f) => f.setAside,
);

/** What the deployment is doing (its shared tables), read when the metrics are scraped. */
export interface DeploymentFigures {
  /** unfinished actions per status */
  unfinishedActions: Record<string, number>;
  /** registered components (rows of `services`) per binary and state */
  components: ReadonlyArray<{ binary: string; state: string; count: number }>;
}

let deploymentSource: (() => Promise<DeploymentFigures>) | null = null;
/** the deployment's tables, once per scrape for the two gauges below */
const readDeployment = sharedRead(() => deploymentSource);

new Gauge({
  name: 'trellis_actions_unfinished',
  help: 'Actions of every project not ended yet, per status (READY: waiting for a policy-engine; RUNNING: decided, Nova at work); the action limits count these',
  labelNames: ['status'],
  registers,
  async collect() {
    const figures = await readDeployment();
    this.reset();
    if (figures) for (const [status, n] of Object.entries(figures.unfinishedActions)) this.set({ status }, n);
  },
});

new Gauge({
  name: 'trellis_components',
  help: 'Registered Trellis processes (GET /v1/services) per binary and state: up while it renews its row, down after 30 s without (killed, or its host lost) until retention forgets it',
  labelNames: ['binary', 'state'],
  registers,
  async collect() {
    const figures = await readDeployment();
    this.reset();
    if (figures) for (const c of figures.components) this.set({ binary: c.binary, state: c.state }, c.count);
  },
});

/** Makes `read` the source of trellis_actions_unfinished and trellis_components (the process's database); returns the undo. */
export function observeDeployment(read: () => Promise<DeploymentFigures>): () => void {
  deploymentSource = read;
  return () => {
    if (deploymentSource === read) deploymentSource = null;
  };
}

/**
 * Per cloud-wide kind of Nova fact, seconds since a nova-worker last read it from Nova (since the
 * worker started, while it has not): what the policies decide on is at most that old. One source
 * per process (the nova-worker's facts refresher).
 */
let cloudFactsSource: (() => Record<string, number>) | null = null;

new Gauge({
  name: 'trellis_cloud_facts_age_seconds',
  help: "Seconds since this nova-worker last read each cloud-wide Nova fact (availability_zones, hypervisors, host_zones) from Nova; since it started while it has not",
  labelNames: ['kind'],
  registers,
  collect() {
    this.reset();
    if (!cloudFactsSource) return;
    for (const [kind, age] of Object.entries(cloudFactsSource())) this.set({ kind }, age);
  },
});

/** Makes `ages` the source of trellis_cloud_facts_age_seconds; returns the undo. */
export function observeCloudFacts(ages: () => Record<string, number>): () => void {
  cloudFactsSource = ages;
  return () => {
    if (cloudFactsSource === ages) cloudFactsSource = null;
  };
}

/** Makes `read` the source of the outbox gauges (the process's database); returns the undo. */
export function observeOutbox(read: () => Promise<OutboxFigures>): () => void {
  outboxSource = read;
  return () => {
    if (outboxSource === read) outboxSource = null;
  };
}

let processMetrics = false;

/**
 * Node's own metrics (CPU, memory, event loop lag, GC, handles): turned on once, by a process's
 * entry point (its collectors live as long as the process, so libraries and tests leave them off).
 */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The registry in Prometheus's text format, and its content type. */
export async function scrapeMetrics(): Promise<{ contentType: string; text: string }> {
  return { contentType: metricsRegistry.contentType, text: await metricsRegistry.metrics() };
}

/** `2xx`…`5xx` for an HTTP status, `error` when no answer came (refused, reset, timeout). */
export function statusClass(status: number | null): string {
  return status === null || status < 100 || status > 599 ? 'error' : `${Math.floor(status / 100)}xx`;
}

/** A policy chain's length as a label: 0-9, then `10+`. */
export const chainLengthLabel = (n: number): string => (n >= 10 ? '10+' : String(n));

/** Seconds since `startNs` (from process.hrtime.bigint()). */
export const secondsSince = (startNs: bigint): number => Number(process.hrtime.bigint() - startNs) / 1e9;
