import { ApiError, jsonBody, type SimRequest, type SimResponse } from './http-kit';
import type { Caller, IdentityStore, TokenRecord } from './identity';

/** Keystone v3 under `/identity`: version documents, tokens, application credentials, trusts. */

export interface IdentityContext {
  identity: IdentityStore;
  /** `<url>/identity/v3` */
  authUrl: string;
  catalog: () => unknown[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Keystone's error body: `{"error": {"code": 401, "message": "...", "title": "Unauthorized"}}`. */
export function keystoneError(status: number, message: string, headers: Record<string, string> = {}): SimResponse {
  return { status, headers, body: { error: { code: status, message, title: TITLES[status] ?? 'Error' } } };
}

const header = (req: SimRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const UNAUTHENTICATED = 'The request you have made requires authentication.';

function versionDoc(ctx: IdentityContext) {
  return {
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${ctx.authUrl}/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  };
}

export function handleIdentity(req: SimRequest, sub: string, ctx: IdentityContext): SimResponse {
  try {
    return routeIdentity(req, sub.replace(/\/+$/, ''), ctx);
  } catch (e) {
    if (e instanceof ApiError) return keystoneError(e.status, e.message, e.headers);
    throw e;
  }
}

function routeIdentity(req: SimRequest, path: string, ctx: IdentityContext): SimResponse {
  const method = req.method;
  if (path === '' && method === 'GET') return { status: 300, body: { versions: { values: [versionDoc(ctx)] } } };
  if (path === '/v3' && method === 'GET') return { status: 200, body: { version: versionDoc(ctx) } };
  if (path === '/v3/auth/tokens') {
    if (method === 'POST') return issueToken(req, ctx);
    if (method === 'GET' || method === 'HEAD') return validateToken(req, ctx);
    if (method === 'DELETE') return revokeToken(req, ctx);
    throw new ApiError(405, 'The method is not allowed for the requested URL.');
  }
  if (path === '/v3/auth/projects' && method === 'GET') {
    const caller = authenticated(req, ctx);
    const projects = ctx.identity.projects
      .filter((p) => ctx.identity.rolesOn(caller.user.id, p.id).length > 0)
      .map((p) => ({ id: p.id, name: p.name, domain_id: 'default', enabled: true, is_domain: false, parent_id: 'default', links: { self: `${ctx.authUrl}/projects/${p.id}` } }));
    return { status: 200, body: { projects, links: { self: `${ctx.authUrl}/auth/projects`, previous: null, next: null } } };
  }
  if (path === '/v3/OS-TRUST/trusts') return trustCollection(req, ctx);
  const trust = /^\/v3\/OS-TRUST\/trusts\/([^/]+)$/.exec(path);
  if (trust) return trustItem(req, ctx, decodeURIComponent(trust[1]));
  const creds = /^\/v3\/users\/([^/]+)\/application_credentials(?:\/([^/]+))?$/.exec(path);
  if (creds) return applicationCredentials(req, ctx, decodeURIComponent(creds[1]), creds[2] && decodeURIComponent(creds[2]));
  throw new ApiError(404, 'The resource could not be found.');
}

function authenticated(req: SimRequest, ctx: IdentityContext): Caller {
  const caller = ctx.identity.resolve(header(req, 'x-auth-token'));
  if (!caller) throw new ApiError(401, UNAUTHENTICATED, { 'WWW-Authenticate': `Keystone uri="${ctx.authUrl}"` });
  return caller;
}

function tokenResponse(status: number, token: TokenRecord, req: SimRequest, ctx: IdentityContext): SimResponse {
  const withCatalog = !req.query.has('nocatalog');
  const body = ctx.identity.tokenBody(token, withCatalog ? ctx.catalog() : []);
  if (!withCatalog) delete (body.token as Record<string, unknown>).catalog;
  return { status, headers: { 'X-Subject-Token': token.id, Vary: 'X-Auth-Token' }, body };
}

function issueToken(req: SimRequest, ctx: IdentityContext): SimResponse {
  const token = ctx.identity.authenticate(jsonBody(req));
  return tokenResponse(201, token, req, ctx);
}

function subjectToken(req: SimRequest): string {
  const subject = header(req, 'x-subject-token');
  if (!subject) throw new ApiError(400, 'Expecting to find X-Subject-Token in headers - the server could not comply with the request since it is either malformed or otherwise incorrect.');
  return subject;
}

function validateToken(req: SimRequest, ctx: IdentityContext): SimResponse {
  authenticated(req, ctx);
  const subject = subjectToken(req);
  const target = ctx.identity.resolve(subject);
  if (!target) {
    const trustId = ctx.identity.deadTrustOf(subject);
    throw new ApiError(404, trustId ? `Could not find trust: ${trustId}.` : `Could not find token: ${subject}.`);
  }
  const res = tokenResponse(200, target.token, req, ctx);
  return req.method === 'HEAD' ? { status: 200, headers: res.headers } : res;
}

function revokeToken(req: SimRequest, ctx: IdentityContext): SimResponse {
  authenticated(req, ctx);
  const subject = subjectToken(req);
  if (!ctx.identity.resolve(subject)) throw new ApiError(404, `Could not find token: ${subject}.`);
  ctx.identity.revoke(subject);
  return { status: 204 };
}

function applicationCredentials(req: SimRequest, ctx: IdentityContext, userId: string, credId: string | undefined): SimResponse {
  const caller = authenticated(req, ctx);
  if (caller.user.id !== userId && !caller.isAdmin) {
    throw new ApiError(403, 'You are not authorized to perform the requested action: identity:list_application_credentials.');
  }
  const view = (c: Parameters<IdentityStore['applicationCredentialView']>[0], secret: boolean) =>
    ctx.identity.applicationCredentialView(c, secret, ctx.authUrl);
  if (credId === undefined) {
    if (req.method === 'POST') {
      const cred = ctx.identity.createApplicationCredential(caller, userId, jsonBody(req));
      return { status: 201, body: { application_credential: view(cred, true) } };
    }
    if (req.method === 'GET') {
      return { status: 200, body: { application_credentials: ctx.identity.applicationCredentialsOf(userId).map((c) => view(c, false)) } };
    }
    throw new ApiError(405, 'The method is not allowed for the requested URL.');
  }
  const cred = ctx.identity.applicationCredentialsOf(userId).find((c) => c.id === credId);
  if (!cred) throw new ApiError(404, `Could not find application credential: ${credId}.`);
  if (req.method === 'GET') return { status: 200, body: { application_credential: view(cred, false) } };
  if (req.method === 'DELETE') {
    ctx.identity.deleteApplicationCredential(userId, credId);
    return { status: 204 };
  }
  throw new ApiError(405, 'The method is not allowed for the requested URL.');
}

function trustCollection(req: SimRequest, ctx: IdentityContext): SimResponse {
  const caller = authenticated(req, ctx);
  if (req.method === 'POST') {
    const trust = ctx.identity.createTrust(caller, jsonBody(req));
    return { status: 201, body: { trust: ctx.identity.trustView(trust, ctx.authUrl, true) } };
  }
  if (req.method === 'GET') {
    const trusts = ctx.identity.listTrusts(caller, req.query.get('trustor_user_id'), req.query.get('trustee_user_id'));
    const query = req.query.toString();
    return {
      status: 200,
      body: {
        trusts: trusts.map((t) => ctx.identity.trustView(t, ctx.authUrl, false)),
        links: { next: null, self: `${ctx.authUrl}/OS-TRUST/trusts${query ? `?${query}` : ''}`, previous: null },
      },
    };
  }
  throw new ApiError(405, 'The method is not allowed for the requested URL.');
}

function trustItem(req: SimRequest, ctx: IdentityContext, id: string): SimResponse {
  const caller = authenticated(req, ctx);
  if (req.method === 'GET') return { status: 200, body: { trust: ctx.identity.trustView(ctx.identity.readTrust(caller, id), ctx.authUrl, true) } };
  if (req.method === 'DELETE') {
    ctx.identity.deleteTrust(caller, id);
    return { status: 204 };
  }
  throw new ApiError(405, 'The method is not allowed for the requested URL.');
}
