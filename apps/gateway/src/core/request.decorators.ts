import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AuthContext } from '@trellis/common';
import { ApiVersion } from './api-version';
import type { HttpRequest, RequestContext } from './http.types';

function ctxOf(context: ExecutionContext): RequestContext {
  const req = context.switchToHttp().getRequest<HttpRequest>();
  if (!req.trellis) throw new Error('request context missing: is the ApiGuard installed?');
  return req.trellis;
}

/** The authenticated caller (set by ApiGuard). */
export const Caller = createParamDecorator((_: unknown, context: ExecutionContext): AuthContext => {
  const caller = ctxOf(context).caller;
  if (!caller) throw new Error('caller missing on an authenticated route');
  return caller;
});

/** The request's id, base URL, microversion and caller. */
export const Ctx = createParamDecorator((_: unknown, context: ExecutionContext): ApiRequest => {
  const ctx = ctxOf(context);
  if (!ctx.caller || !ctx.version) throw new Error('caller missing on an authenticated route');
  if (!ctx.allows) throw new Error('policy check missing on an authenticated route: is the PolicyGuard installed?');
  return { requestId: ctx.requestId, baseUrl: ctx.baseUrl, version: ctx.version, caller: ctx.caller, allows: ctx.allows };
});

/** Everything a use case needs to know about who asked, and how. */
export interface ApiRequest {
  requestId: string;
  baseUrl: string;
  version: ApiVersion;
  caller: AuthContext;
  /**
   * whether the caller passes a policy rule; the operation's own rule was checked at the entry,
   * this is for what depends on the request (`cloud_admin` for global_project and cross-project replay)
   */
  allows(rule: string): boolean;
  /**
   * where the request came from: REST (people; the default), RPC (other services) or a webhook
   * trigger (alarms). The limits on unfinished actions differ (docs/SECURITY.md, Limits).
   */
  via?: RequestVia;
}

export type RequestVia = 'rest' | 'rpc' | 'webhook';
