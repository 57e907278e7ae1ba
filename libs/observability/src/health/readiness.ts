import { type DynamicModule, Inject, Injectable, Module, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService, TerminusModule, type HealthCheckResult } from '@nestjs/terminus';

/** A readiness probe gets this long: one that hangs is as bad as none. */
export const PROBE_TIMEOUT_MS = 2_000;

/** A part a service needs to serve: the database, the broker, the cloud. */
export interface ReadinessProbe {
  /** how the answer names it: `database`, `broker`, `cloud` */
  name: string;
  /**
   * Resolves when the part answers; otherwise throws an Error whose message says why not, e.g.
   * `unavailable (ECONNREFUSED)`: a code or a driver message, never an address or a credential.
   */
  check(): Promise<void>;
}

export interface CheckOutcome {
  ok: boolean;
  reason?: string;
}

export interface ReadinessAnswer {
  ready: boolean;
  body: { status: 'ready' | 'not ready'; reason?: string; checks: Record<string, CheckOutcome> };
}

/** Rejects with `unavailable (no answer within N ms)` when `work` takes longer than `ms`. */
export async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`unavailable (no answer within ${ms} ms)`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const READINESS_PROBES = Symbol('READINESS_PROBES');
const DRAINING = Symbol('DRAINING');

/**
 * Set when a process begins to stop: from then on its /readyz answers 503 "shutting down" while it
 * still serves, so load balancers that poll /readyz stop sending it requests before it closes
 * (TRELLIS_SHUTDOWN_DRAIN_SECONDS, README "Upgrading a running deployment").
 */
export class Draining {
  private on = false;

  start(): void {
    this.on = true;
  }

  get active(): boolean {
    return this.on;
  }
}

/**
 * Runs the service's probes through terminus (all at once, each within PROBE_TIMEOUT_MS) and
 * answers in Trellis's shape: `{status: 'ready', checks: {database: {ok: true}, …}}`, or `not
 * ready` with every failing part and why in `reason` (`database: unavailable (ECONNREFUSED)`). A
 * service that is shutting down is not ready either, whatever its parts say.
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(READINESS_PROBES) private readonly probes: ReadinessProbe[],
    @Inject(DRAINING) private readonly draining: Draining,
  ) {}

  async check(): Promise<ReadinessAnswer> {
    let result: HealthCheckResult;
    try {
      result = await this.health.check(
        this.probes.map((p) => () => this.indicators.check(p.name).attempt(() => within(PROBE_TIMEOUT_MS, p.check()))),
      );
    } catch (e) {
      if (!(e instanceof ServiceUnavailableException)) throw e;
      result = e.getResponse() as HealthCheckResult;
    }
    const checks: Record<string, CheckOutcome> = {};
    const failing: string[] = [];
    for (const p of this.probes) {
      const detail = result.details[p.name] as { status: string; message?: string } | undefined;
      if (detail?.status === 'up') {
        checks[p.name] = { ok: true };
      } else {
        checks[p.name] = { ok: false, reason: detail?.message ?? 'error' };
        failing.push(`${p.name}: ${checks[p.name].reason}`);
      }
    }
    if (result.status === 'shutting_down' || this.draining.active) failing.unshift('shutting down');
    if (failing.length === 0) return { ready: true, body: { status: 'ready', checks } };
    return { ready: false, body: { status: 'not ready', reason: failing.join('; '), checks } };
  }
}

/** Readiness over these probes, for a module that serves /readyz (the gateway, the ops server). */
@Module({})
export class ReadinessModule {
  static forRoot(probes: ReadinessProbe[], draining: Draining = new Draining()): DynamicModule {
    return {
      module: ReadinessModule,
      // failures are answered (and logged by the services), not printed by terminus on its own
      imports: [TerminusModule.forRoot({ logger: false })],
      providers: [{ provide: READINESS_PROBES, useValue: probes }, { provide: DRAINING, useValue: draining }, Readiness],
      exports: [Readiness],
    };
  }
}
