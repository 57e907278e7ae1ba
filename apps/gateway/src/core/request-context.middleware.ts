import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import type { HttpRequest, HttpResponse, NextFn, RequestContext } from './http.types';

export const REQUEST_ID_HEADER = 'X-Openstack-Request-Id';

/** Gives every request its id (`req-<uuid>`, as oslo's request-id middleware did) and base URL. */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  use(req: HttpRequest, res: HttpResponse, next: NextFn): void {
    const ctx = contextOf(req, this.config.publicUrl);
    res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
    next();
  }
}

export function contextOf(req: HttpRequest, publicUrl: string | null): RequestContext {
  if (!req.trellis) {
    req.trellis = { requestId: `req-${randomUUID()}`, baseUrl: baseUrlOf(req, publicUrl) };
  }
  return req.trellis;
}

/** TRELLIS_PUBLIC_URL when set (a proxy in front), else the scheme and Host the client used. */
export function baseUrlOf(req: HttpRequest, publicUrl: string | null): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const host = req.get('host') ?? 'localhost';
  return `${req.protocol}://${host}`;
}
