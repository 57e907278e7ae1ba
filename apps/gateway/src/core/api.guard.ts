import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, isDomainError, unavailable, type AuthContext } from '@trellis/common';
import { TOKEN_VALIDATOR, type TokenValidator } from '@trellis/identity';
import { RequestRate } from '../limits/request-rate';
import { API_VERSION_HEADER, SERVICE_TYPE, negotiateApiVersion } from './api-version';
import { GATEWAY_CONFIG, type GatewayConfig } from './gateway-config';
import type { HttpRequest, HttpResponse } from './http.types';
import { contextOf } from './request-context.middleware';

export const PUBLIC_ROUTE = 'trellis:public-route';
/** Version discovery: no token and no microversion. */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

export const AUTH_REQUIRED = 'The request you have made requires authentication.';

/**
 * Runs before every controller method: negotiates the microversion (echoed on the response),
 * authenticates the caller through the injected TokenValidator (Keystone) and takes one request of
 * the caller's project's rate (429 past it). The project a request works on comes from here only.
 */
@Injectable()
export class ApiGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(TOKEN_VALIDATOR) private readonly tokens: TokenValidator,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly rate: RequestRate,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const res = context.switchToHttp().getResponse<HttpResponse>();
    const ctx = contextOf(req, this.config.publicUrl);
    ctx.version = negotiateApiVersion(header(req, 'openstack-api-version'), header(req, 'accept'));
    res.setHeader(API_VERSION_HEADER, `${SERVICE_TYPE} ${ctx.version}`);
    res.append('Vary', API_VERSION_HEADER);
    ctx.caller = await authenticate(this.tokens, header(req, 'x-auth-token'));
    this.rate.admitCaller(ctx.caller, 'rest');
    return true;
  }
}

/**
 * The caller behind a Keystone token, for every transport (HTTP's X-Auth-Token, the RPC message's
 * `token`): 401 without a token or for one Keystone refuses, 503 when Keystone cannot answer.
 */
export async function authenticate(tokens: TokenValidator, token: string | undefined): Promise<AuthContext> {
  if (!token) throw new DomainError('UNAUTHORIZED', AUTH_REQUIRED, 'HTTPUnauthorized');
  let caller: AuthContext | null;
  try {
    caller = await tokens.validate(token);
  } catch (e) {
    if (isDomainError(e)) throw e;
    throw unavailable('The identity service could not validate the token.');
  }
  if (!caller) throw new DomainError('UNAUTHORIZED', AUTH_REQUIRED, 'HTTPUnauthorized');
  return caller;
}

function header(req: HttpRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}
