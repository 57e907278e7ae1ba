import { Controller, Get, Res } from '@nestjs/common';
import { HealthCheck } from '@nestjs/terminus';
import { scrapeMetrics } from '../metrics';
import { Readiness } from './readiness';

/** Seconds a client waits before asking again when /readyz says not ready. */
export const READY_RETRY_AFTER_SECONDS = 5;

/** The slice of Express's response these controllers use. */
interface OpsResponse {
  status(code: number): OpsResponse;
  setHeader(name: string, value: string): void;
  send(body: string): void;
}

/**
 * `/healthz`: the process answers (liveness; nothing else is looked at, so a database outage
 * never gets a healthy process restarted). `/readyz`: it can do its work now (readiness): 200, or
 * 503 with `Retry-After` and the failing part named, so traffic goes elsewhere meanwhile.
 */
@Controller()
export class ProbesController {
  constructor(private readonly readiness: Readiness) {}

  @Get('healthz')
  live() {
    return { status: 'alive' };
  }

  @Get('readyz')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  async ready(@Res({ passthrough: true }) res: OpsResponse) {
    const answer = await this.readiness.check();
    if (!answer.ready) res.status(503).setHeader('Retry-After', String(READY_RETRY_AFTER_SECONDS));
    return answer.body;
  }
}

/** `/metrics`: the process's registry in Prometheus's text format, without a token. */
@Controller()
export class MetricsController {
  @Get('metrics')
  async metrics(@Res() res: OpsResponse): Promise<void> {
    const { contentType, text } = await scrapeMetrics();
    res.setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(text);
  }
}
