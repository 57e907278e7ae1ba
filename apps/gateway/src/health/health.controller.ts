import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { PublicRoute } from '../core/api.guard';
import type { HttpResponse } from '../core/http.types';
import { RETRY_AFTER_SECONDS } from '../core/senlin-exception.filter';
import { isDatabaseUnavailable, sqlState } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';

/** A readiness probe that hangs is as bad as none: the database gets this long to answer. */
const PROBE_TIMEOUT_MS = 2_000;

interface Check {
  ok: boolean;
  /** why not, when not ok: the error's code or driver message, never an address or a credential */
  reason?: string;
}

/**
 * Probes for load balancers and orchestrators, without a token. `/healthz`: the process answers.
 * `/readyz`: it can serve requests now, i.e. the database answers; 503 with `Retry-After` and the
 * reason otherwise, so traffic goes elsewhere while PostgreSQL is down.
 */
@ApiExcludeController()
@Controller()
@PublicRoute()
export class HealthController {
  constructor(private readonly uow: UnitOfWork) {}

  @Get('healthz')
  live() {
    return { status: 'alive' };
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) res: HttpResponse) {
    const database = await this.probeDatabase();
    if (!database.ok) {
      res.status(503).setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      return { status: 'not ready', reason: `database: ${database.reason}`, checks: { database } };
    }
    return { status: 'ready', checks: { database } };
  }

  private async probeDatabase(): Promise<Check> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.uow.manager.query('SELECT 1'), timeout]);
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: reasonOf(e) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `unavailable (ECONNREFUSED)`, `unavailable (Connection terminated unexpectedly)`, `error 28P01`… */
function reasonOf(e: unknown): string {
  const code = sqlState(e);
  const message = e instanceof Error ? e.message : String(e);
  if (isDatabaseUnavailable(e)) return `unavailable (${code ?? message})`;
  if (message.startsWith('no answer within')) return `unavailable (${message})`;
  return code ? `error ${code}` : 'error';
}
