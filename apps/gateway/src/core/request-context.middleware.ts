import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { OPENSTACK_REQUEST_ID, withLogContext, type Logger } from '@trellis/common';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import type { HttpRequest, HttpResponse, NextFn, RequestContext } from './http.types';
import { redactWebhook } from './senlin-exception.filter';
import { GATEWAY_LOGGER } from './tokens';

export const REQUEST_ID_HEADER = 'X-Openstack-Request-Id';

/** Asked every few seconds by load balancers and Prometheus: their answers are logged at debug only. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Gives every request its id and base URL, runs it in a log context carrying the id (so every
 * line written while it is handled has it, and the actions it starts take it along as their
 * correlation id) and logs one line when it has been answered.
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  use(req: HttpRequest, res: HttpResponse, next: NextFn): void {
    const ctx = contextOf(req, this.config.publicUrl);
    res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
    const started = process.hrtime.bigint();
    const level = PROBE_PATHS.has(req.path) ? 'debug' : 'info';
    res.on('finish', () =>
      this.logger[level]('request answered', {
        correlation_id: ctx.requestId,
        method: req.method,
        path: redactWebhook(req.path),
        status: res.statusCode,
        duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
      }),
    );
    withLogContext({ correlation_id: ctx.requestId }, next);
  }
}

/**
 * The request's id: the client's `X-OpenStack-Request-ID` when it is an OpenStack request id
 * (`req-<uuid>`, as a client or another OpenStack service sends it), otherwise a new one, as
 * oslo's request-id middleware makes.
 */
export function contextOf(req: HttpRequest, publicUrl: string | null): RequestContext {
  if (!req.trellis) {
    const given = req.get(REQUEST_ID_HEADER);
    const requestId = given !== undefined && OPENSTACK_REQUEST_ID.test(given) ? given : `req-${randomUUID()}`;
    req.trellis = { requestId, baseUrl: baseUrlOf(req, publicUrl) };
  }
  return req.trellis;
}

/** TRELLIS_PUBLIC_URL when set (a proxy in front), else the scheme and Host the client used. */
export function baseUrlOf(req: HttpRequest, publicUrl: string | null): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const host = req.get('host') ?? 'localhost';
  return `${req.protocol}://${host}`;
}
