import { randomUUID } from 'node:crypto';
import { ApiClient, type ApiResponse } from '../support/api-client';

/** One scaling request the load sent, from its first try to its end. */
export interface ActionRecord {
  cluster: string;
  phase: string;
  body: Record<string, unknown>;
  /** the node count the cluster has once this action SUCCEEDED */
  expectedSize: number;
  /** the Idempotency-Key of every try of this request */
  key: string;
  /** which of the load's gateways it was sent through (an index into `apis`) */
  gateway: number;
  /** sent through another gateway at the same moment as the cluster's real request (`race`) */
  racer?: boolean;
  /** one of a race's two requests the gateway refused as Senlin does (409: the cluster is locked or has an active action) */
  refused?: string;
  acceptedAt?: number;
  actionId?: string;
  /** the last status seen: a terminal one, or what it was when the deadline passed */
  status?: string;
  statusReason?: string;
  finishedAt?: number;
  /** not terminal by its deadline */
  lost?: boolean;
}

/** An answer that counts against the system, kept for the report. */
export interface BadAnswer {
  at: string;
  phase: string;
  request: string;
  what: string;
}

export interface LoadCounters {
  accepted: number;
  /** 503 with Senlin's body and Retry-After: the client was told; retried with the same key */
  refused503: number;
  /** connection refused or reset while the gateway was down or restarting; retried with the same key */
  unreachable: number;
  /** 202s that were a replay of a try whose answer the client never got (Idempotent-Replayed) */
  replayed: number;
  other5xx: number;
  /** a request that did not answer within the hang limit */
  hangs: number;
  /** a 4xx to a request the load believes valid (e.g. a 409 on a cluster it waits for) */
  unexpected4xx: number;
  /** 429 answers (the per-project request rate): waited out as their Retry-After says, then sent again */
  throttled429: number;
  /** requests of a race refused with Senlin's 409 because the other request for the cluster got there first */
  raceRefused409: number;
}

export interface LoadOptions {
  api: ApiClient;
  /**
   * More gateways (replicas of one deployment): each action goes through the next one in turn,
   * `api` first; its polls go through the same gateway.
   */
  moreApis?: ApiClient[];
  /**
   * Race every request: the same moment, another gateway is asked to resize the cluster to the size
   * the request will leave it at. The clusters' serialisation across gateways is what is tested: one
   * of the two is accepted and the other refused with Senlin's 409, or (when the first ended before
   * the second arrived) both run one after the other; the cluster's final size is the same either
   * way. Both refused is a failure (noted in `bad`).
   */
  race?: boolean;
  clusters: string[];
  /** Senlin's per-cluster action timeout (seconds) and the lease: an action must end within both */
  actionTimeoutSeconds: number;
  leaseSeconds: number;
  /** a request unanswered after this long is a hang */
  hangMs: number;
  /** the later of an action's acceptance and this instant starts its deadline (the end of the last fault) */
  lastRecovery: () => number;
  pollMs?: number;
  maxSize?: number;
  random?: () => number;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The client side of the suite: one loop per cluster, each sending one scaling action at a time
 * (Senlin locks a cluster while an action runs, so a cluster has one action in flight and the
 * clusters together as many) and polling it to its end. Every write carries an Idempotency-Key and
 * is retried with it after a 503, a refused connection or a hang, so a try whose answer was lost
 * (the gateway killed between commit and reply) is answered by the replay, never run twice.
 * `allow(n)` lets n more actions start; `drained()` resolves once none is in flight.
 */
export class ScalingLoad {
  readonly records: ActionRecord[] = [];
  readonly bad: BadAnswer[] = [];
  readonly counters: LoadCounters = {
    accepted: 0,
    refused503: 0,
    unreachable: 0,
    replayed: 0,
    other5xx: 0,
    hangs: 0,
    unexpected4xx: 0,
    throttled429: 0,
    raceRefused409: 0,
  };
  /** the clusters' sizes as the succeeded actions left them (null once an action FAILED: unknown) */
  readonly sizes = new Map<string, number | null>();
  phase = 'start';
  private allowance = 0;
  private inFlight = 0;
  private stopped = false;
  private wake: Array<() => void> = [];
  private loops: Promise<void>[] = [];
  private readonly random: () => number;
  private readonly apis: ApiClient[];
  private nextApi = 0;

  constructor(private readonly o: LoadOptions) {
    this.random = o.random ?? Math.random;
    this.apis = [o.api, ...(o.moreApis ?? [])];
    for (const c of o.clusters) this.sizes.set(c, 0);
  }

  start(): void {
    this.loops = this.o.clusters.map((c) => this.loop(c));
  }

  allow(n: number): void {
    this.allowance += n;
    for (const w of this.wake.splice(0)) w();
  }

  /** nothing in flight and nothing more allowed to start */
  get idle(): boolean {
    return this.inFlight === 0 && this.allowance === 0;
  }

  acceptedIn(phase: string): number {
    return this.records.filter((r) => r.phase === phase && r.actionId).length;
  }

  async drained(): Promise<void> {
    while (this.inFlight > 0 || this.allowance > 0) await sleep(100);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.allowance = 0;
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.loops);
  }

  private async loop(cluster: string): Promise<void> {
    while (!this.stopped) {
      if (this.allowance === 0) {
        await new Promise<void>((r) => this.wake.push(r));
        continue;
      }
      this.allowance -= 1;
      this.inFlight += 1;
      try {
        await this.one(cluster);
      } finally {
        this.inFlight -= 1;
      }
    }
  }

  /** the next request for a cluster of `size` nodes: grow, shrink or resize within 0..maxSize */
  private choose(size: number): { body: Record<string, unknown>; expected: number } {
    const max = this.o.maxSize ?? 4;
    const pick = (n: number) => Math.floor(this.random() * n);
    const kind = size === 0 ? 'scale_out' : size >= max ? 'scale_in' : (['scale_out', 'scale_in', 'resize'] as const)[pick(3)];
    if (kind === 'scale_out') {
      const count = 1 + pick(Math.min(2, max - size));
      return { body: { scale_out: { count } }, expected: size + count };
    }
    if (kind === 'scale_in') {
      const count = 1 + pick(Math.min(2, size));
      return { body: { scale_in: { count } }, expected: size - count };
    }
    let target = pick(max + 1);
    if (target === size) target = (size + 1) % (max + 1);
    return { body: { resize: { adjustment_type: 'EXACT_CAPACITY', number: target } }, expected: target };
  }

  private async one(cluster: string): Promise<void> {
    const size = this.sizes.get(cluster);
    if (size === null || size === undefined) return; // a FAILED action left the size unknown: the invariants judge it
    const { body, expected } = this.choose(size);
    const gateway = this.nextApi++ % this.apis.length;
    const record: ActionRecord = { cluster, phase: this.phase, body, expectedSize: expected, key: randomUUID(), gateway };
    const round = [record];
    if (this.o.race) {
      round.push({
        cluster,
        phase: this.phase,
        body: { resize: { adjustment_type: 'EXACT_CAPACITY', number: expected } },
        expectedSize: expected,
        key: randomUUID(),
        gateway: (gateway + 1) % this.apis.length,
        racer: true,
      });
    }
    this.records.push(...round);
    const answers = await Promise.all(round.map((r) => this.submit(r)));
    const running = round.filter((_, i) => answers[i]);
    if (!running.length) {
      if (this.o.race && round.every((r) => r.refused)) this.note(record.phase, `race on ${cluster}`, `both requests refused: ${round.map((r) => r.refused).join(' / ')}`);
      return;
    }
    await Promise.all(running.map((r) => this.follow(r)));
    this.sizes.set(cluster, running.every((r) => r.status === 'SUCCEEDED') ? expected : null);
  }

  /** POST until a definite answer; true when the action was accepted (202) */
  private async submit(r: ActionRecord): Promise<boolean> {
    const what = `POST /v1/clusters/${r.cluster}/actions ${JSON.stringify(r.body)} via gateway ${r.gateway}`;
    for (;;) {
      const res = await this.request(r.phase, what, () =>
        this.apis[r.gateway].call('POST', `/v1/clusters/${r.cluster}/actions`, r.body, { headers: { 'Idempotency-Key': r.key }, timeoutMs: this.o.hangMs }),
      );
      if (res === null) {
        await sleep(500);
        continue;
      }
      if (res.status === 202) {
        r.actionId = ApiClient.actionIdOf(res);
        r.acceptedAt = Date.now();
        this.counters.accepted += 1;
        if (res.headers.get('idempotent-replayed') === 'true') this.counters.replayed += 1;
        return true;
      }
      if (res.status === 429) {
        await this.throttled(res);
        continue;
      }
      if (res.status === 503) {
        await sleep(1000);
        continue;
      }
      if (res.status >= 500) {
        await sleep(1000);
        continue;
      }
      // Senlin's two answers for a busy cluster: locked by a RUNNING action, or an active one on the target
      if (this.o.race && res.status === 409 && ['ResourceIsLocked', 'ActionConflict'].includes(res.body?.error?.type) && res.body.error.message) {
        r.refused = res.body.error.message;
        this.counters.raceRefused409 += 1;
        return false;
      }
      this.counters.unexpected4xx += 1;
      this.note(r.phase, what, `${res.status} ${JSON.stringify(res.body)}`);
      return false;
    }
  }

  /** a 429 tells a well-behaved client when to come back; 20 pollers of one project can exceed its default rate */
  private async throttled(res: { headers: Headers }): Promise<void> {
    this.counters.throttled429 += 1;
    const seconds = Number(res.headers.get('retry-after'));
    await sleep(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000);
  }

  /** Polls the action until it is terminal or its deadline (lease + timeout after acceptance or the last fault) passed. */
  private async follow(r: ActionRecord): Promise<void> {
    const what = `GET /v1/actions/${r.actionId}`;
    const deadline = () => Math.max(r.acceptedAt!, this.o.lastRecovery()) + (this.o.leaseSeconds + this.o.actionTimeoutSeconds) * 1000;
    while (Date.now() < deadline()) {
      const res = await this.request(r.phase, what, () => this.apis[r.gateway].call('GET', `/v1/actions/${r.actionId}`, undefined, { timeoutMs: this.o.hangMs }));
      if (res?.status === 200) {
        r.status = res.body.action.status;
        r.statusReason = res.body.action.status_reason;
        if (TERMINAL.includes(r.status!)) {
          r.finishedAt = Date.now();
          return;
        }
      } else if (res?.status === 429) {
        await this.throttled(res);
        continue;
      } else if (res && res.status < 500) {
        this.counters.unexpected4xx += 1;
        this.note(r.phase, what, `${res.status} ${JSON.stringify(res.body)}`);
      }
      await sleep(this.o.pollMs ?? 500);
    }
    r.lost = true;
  }

  /**
   * One try. Counts what the answer says about the system: a 503 must carry Senlin's body and
   * Retry-After; any other 5xx is a failure; a request over the hang limit is a failure; a refused
   * or reset connection is the gateway being down. Null when there is no answer to act on.
   */
  private async request(phase: string, what: string, send: () => Promise<ApiResponse>): Promise<ApiResponse | null> {
    let res: ApiResponse;
    try {
      res = await send();
    } catch (e) {
      if ((e as Error).name === 'TimeoutError') {
        this.counters.hangs += 1;
        this.note(phase, what, `no answer within ${this.o.hangMs} ms`);
      } else {
        this.counters.unreachable += 1;
      }
      return null;
    }
    if (res.status === 503) {
      this.counters.refused503 += 1;
      const message = res.body?.error?.message;
      if (!res.headers.get('retry-after') || typeof message !== 'string' || message === '') {
        this.counters.other5xx += 1;
        this.note(phase, what, `503 without Senlin's error body or Retry-After: ${JSON.stringify(res.body)}`);
      }
    } else if (res.status >= 500) {
      this.counters.other5xx += 1;
      this.note(phase, what, `${res.status} ${JSON.stringify(res.body)}`);
    }
    return res;
  }

  private note(phase: string, request: string, what: string): void {
    this.bad.push({ at: new Date().toISOString(), phase, request, what });
  }
}
