import { Body, Controller, Get, HttpCode, Inject, Optional, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DomainError, badRequest, isDomainError, unavailable, type AuthContext } from '@trellis/common';
import { TOKEN_VALIDATOR, type PasswordSignIn, type TokenValidator } from '@trellis/identity';
import { PublicRoute, authenticate } from '../core/api.guard';
import type { HttpRequest, HttpResponse } from '../core/http.types';
import { PASSWORD_SIGN_IN } from '../core/tokens';
import { checkKeys, isMap, show } from '../shared/body';
import { HostVisibility } from '../shared/host-visibility';
import { isotime } from '../shared/views';
import { setSecurityHeaders } from './ui-assets';

const FIELDS = ['username', 'password', 'project', 'domain'] as const;
/** Keystone's own limit on names is 255 characters; a password is not limited there, but a page is */
const MAX_LENGTH = 1024;

/**
 * The web page's sign-in. `POST /ui/session` turns a user name, password and project into a
 * Keystone token (the configured Keystone's `POST /v3/auth/tokens`); `GET /ui/session` says whom a
 * token belongs to, for a pasted token as for one just issued. Not part of Senlin's API (no RPC
 * pattern, not in the OpenAPI document): the page then calls /v1 with the token like any client.
 * Nothing is stored: the token lives in the page's sessionStorage, and every answer here is no-store.
 */
@ApiExcludeController()
@Controller('ui/session')
@PublicRoute()
export class UiSessionController {
  constructor(
    @Inject(TOKEN_VALIDATOR) private readonly tokens: TokenValidator,
    @Optional() @Inject(PASSWORD_SIGN_IN) private readonly passwords: PasswordSignIn | null,
  ) {}

  @Post()
  @HttpCode(201)
  async signIn(@Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    privateAnswer(res);
    const request = signInRequest(body);
    if (!this.passwords) throw badRequest('This Trellis signs in with a token only: paste one (openstack token issue).');
    let issued: { token: string } | null;
    try {
      issued = await this.passwords.signIn(request);
    } catch (e) {
      if (isDomainError(e)) throw e;
      throw unavailable('The identity service could not be reached to sign in; try again later.');
    }
    if (!issued) {
      throw new DomainError('UNAUTHORIZED', `Keystone refused user '${request.username}' in project '${request.project}' (domain '${request.domain}'): check the name, password and project.`, 'HTTPUnauthorized');
    }
    return { token: issued.token, ...describeCaller(await authenticate(this.tokens, issued.token)) };
  }

  @Get()
  async whoAmI(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse) {
    privateAnswer(res);
    const token = req.headers['x-auth-token'];
    return describeCaller(await authenticate(this.tokens, typeof token === 'string' ? token : undefined));
  }
}

function privateAnswer(res: HttpResponse): void {
  setSecurityHeaders(res);
  res.setHeader('Cache-Control', 'no-store');
}

function signInRequest(body: unknown) {
  if (!isMap(body)) throw badRequest('The request body must be a JSON object with username, password and project.');
  checkKeys(body, FIELDS, ['username', 'password', 'project']);
  const text = (field: (typeof FIELDS)[number], fallback?: string): string => {
    const v = body[field] ?? fallback;
    if (typeof v !== 'string' || v.trim() === '' || v.length > MAX_LENGTH) {
      throw badRequest(`The value for ${field} must be a non-empty string of at most ${MAX_LENGTH} characters: '${field === 'password' ? '***' : show(v)}'.`);
    }
    return field === 'password' ? v : v.trim();
  };
  return { username: text('username'), password: text('password'), project: text('project'), domain: text('domain', 'Default') };
}

/** Who the token is, as the page shows it; `sees_host_names`: whether the API shows this caller host names or Nova's hostIds. */
function describeCaller(caller: AuthContext) {
  return {
    user: { id: caller.userId, name: caller.userName },
    project: { id: caller.projectId, name: caller.projectName },
    roles: caller.roles,
    expires_at: isotime(caller.expiresAt),
    sees_host_names: HostVisibility.seesHosts(caller),
  };
}
