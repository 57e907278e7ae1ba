import { ConfigError } from '@trellis/common';
import { authRequestBody, describeCredentials, type Credentials, type EndpointInterface } from './credentials';
import { HttpTransport, errorFor, pathOf, type HttpRequest, type HttpResponse, type Runtime } from './http-transport';
import { NovaError, NovaResponseError } from './openstack.errors';

export interface CatalogEndpoint {
  interface: string;
  region: string | null;
  url: string;
}

export interface CatalogService {
  type: string;
  name: string | null;
  endpoints: CatalogEndpoint[];
}

export interface Token {
  value: string;
  expiresAt: number;
  /** when this client received it (its clock), for the renewal margin */
  receivedAt: number;
  catalog: CatalogService[];
  /** the token's user (with a trust that impersonates, the trustor); null when Keystone left it out */
  userId: string | null;
  /** the project it is scoped to; null when Keystone left it out */
  projectId: string | null;
}

/** Keystone's timestamps carry microseconds and sometimes no zone; they are UTC. */
export function parseKeystoneTime(text: string): number {
  const trimmed = text.trim();
  const withZone = /(Z|[+-]\d\d:?\d\d)$/.test(trimmed) ? trimmed : `${trimmed}Z`;
  return Date.parse(withZone.replace(/(\.\d{3})\d+/, '$1'));
}

export function parseCatalog(raw: unknown): CatalogService[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object' && typeof (s as Record<string, unknown>).type === 'string')
    .map((s) => ({
      type: String(s.type),
      name: typeof s.name === 'string' ? s.name : null,
      endpoints: (Array.isArray(s.endpoints) ? s.endpoints : [])
        .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object' && typeof (e as Record<string, unknown>).url === 'string')
        .map((e) => ({
          interface: String(e.interface ?? ''),
          region: typeof e.region === 'string' ? e.region : typeof e.region_id === 'string' ? e.region_id : null,
          url: String(e.url),
        })),
    }));
}

/**
 * The endpoint of a service type for an interface and (when given) a region. Errors name the
 * setting to change and list what the catalog offers.
 */
export function selectEndpoint(
  catalog: CatalogService[],
  serviceType: string,
  iface: EndpointInterface,
  region: string | null,
): string {
  const endpoints = catalog.filter((s) => s.type === serviceType).flatMap((s) => s.endpoints);
  if (endpoints.length === 0) {
    const types = [...new Set(catalog.map((s) => s.type))].join(', ') || 'nothing';
    const hint = serviceType === 'compute' ? '; set TRELLIS_COMPUTE_ENDPOINT to name the compute URL' : '';
    throw new ConfigError('OS_AUTH_URL', `gives a token whose catalog has no '${serviceType}' service (it has: ${types})${hint}`);
  }
  const offered = endpoints.map((e) => `${e.interface}/${e.region ?? '-'} ${e.url}`).join(', ');
  const inRegion = region === null ? endpoints : endpoints.filter((e) => e.region === region);
  if (inRegion.length === 0) {
    throw new ConfigError('OS_REGION_NAME', `'${region}' has no ${serviceType} endpoint (the catalog offers: ${offered})`);
  }
  const match = inRegion.find((e) => e.interface === iface);
  if (!match) {
    throw new ConfigError('OS_INTERFACE', `'${iface}' matches no ${serviceType} endpoint${region ? ` in region '${region}'` : ''} (the catalog offers: ${offered})`);
  }
  return match.url.replace(/\/+$/, '');
}

export interface SessionOptions {
  /** renew this long before the token expires (at most half the token's lifetime) */
  renewMarginMs: number;
  /**
   * what Keystone's refusal (401, 403, 404) to issue a token for these credentials becomes; by
   * default a NovaError naming the credentials and where they came from
   */
  refused?: (error: NovaError) => Error;
}

/**
 * A Keystone v3 session: one token at a time, shared by concurrent callers, renewed before it
 * expires and replaced once when a service rejects it with 401.
 */
export class KeystoneSession {
  private current: Token | null = null;
  private pending: Promise<Token> | null = null;

  constructor(
    readonly credentials: Credentials,
    /** also for requests that carry another token (a trustor's, when it creates a trust) */
    readonly transport: HttpTransport,
    private readonly runtime: Runtime,
    private readonly options: SessionOptions,
  ) {}

  async token(): Promise<Token> {
    const token = this.current;
    if (token && this.runtime.now() < token.expiresAt - this.marginFor(token)) return token;
    if (!this.pending) {
      this.pending = this.authenticate().finally(() => {
        this.pending = null;
      });
    }
    return this.pending;
  }

  /** Forget a token a service rejected; a newer one obtained meanwhile is kept. */
  invalidate(value: string): void {
    if (this.current?.value === value) this.current = null;
  }

  async endpoint(serviceType: string): Promise<string> {
    if (serviceType === 'compute' && this.credentials.computeEndpoint) return this.credentials.computeEndpoint;
    const token = await this.token();
    return selectEndpoint(token.catalog, serviceType, this.credentials.interface, this.credentials.regionName);
  }

  /** like endpoint(), but null when the catalog has no such service in this region and interface */
  async optionalEndpoint(serviceType: string): Promise<string | null> {
    try {
      return await this.endpoint(serviceType);
    } catch (e) {
      if (e instanceof ConfigError) return null;
      throw e;
    }
  }

  /** An authenticated request: on 401 the token is renewed and the request sent once more. */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const callerAccepts401 = request.accept?.includes(401) ?? false;
    const accept = [...(request.accept ?? []), 401];
    const first = await this.token();
    const response = await this.transport.send({ ...request, accept, headers: { ...request.headers, 'X-Auth-Token': first.value } });
    if (response.status !== 401) return response;
    this.runtime.logger.debug?.(`${request.method} ${pathOf(request.url)} answered 401; authenticating again`);
    this.invalidate(first.value);
    const second = await this.token();
    const retried = await this.transport.send({ ...request, accept, headers: { ...request.headers, 'X-Auth-Token': second.value } });
    if (retried.status !== 401 || callerAccepts401) return retried;
    const error = errorFor(request, pathOf(request.url), retried);
    throw new NovaError({
      service: error.service,
      status: 401,
      method: error.method,
      path: error.path,
      serviceMessage: `${error.serviceMessage} (a fresh token for ${describeCredentials(this.credentials)} was rejected too)`,
    });
  }

  /**
   * Whether Keystone answers now, for readiness probes: its version document at the auth URL (no
   * token, no retry, not counted as a call). Any answer below 500 will do; otherwise it throws
   * `unavailable (ECONNREFUSED)`, `unavailable (HTTP 503)`…, a code and never the address.
   */
  async ping(timeoutMs: number): Promise<void> {
    let status: number;
    try {
      const signal = AbortSignal.timeout(timeoutMs);
      status = (await this.runtime.exchange({ method: 'GET', url: this.credentials.authUrl, headers: { Accept: 'application/json' }, signal })).status;
    } catch (e) {
      const error = e as { code?: unknown; name?: unknown; cause?: { code?: unknown } };
      const code = error.cause?.code ?? error.code;
      const timedOut = error.name === 'TimeoutError' || error.name === 'AbortError';
      throw new Error(`unavailable (${timedOut ? `no answer within ${timeoutMs} ms` : typeof code === 'string' ? code : 'no answer'})`);
    }
    if (status >= 500) throw new Error(`unavailable (HTTP ${status})`);
  }

  private marginFor(token: Token): number {
    return Math.min(this.options.renewMarginMs, (token.expiresAt - token.receivedAt) / 2);
  }

  private async authenticate(): Promise<Token> {
    const url = `${this.credentials.authUrl}/auth/tokens`;
    const path = pathOf(url);
    let response: HttpResponse;
    try {
      // issuing a token has no lasting effect, so it is safe to repeat after a timeout or 5xx
      response = await this.transport.send({ service: 'identity', operation: 'tokens.issue', method: 'POST', url, body: authRequestBody(this.credentials), idempotent: true });
    } catch (e) {
      if (this.options.refused && e instanceof NovaError && (e.status === 401 || e.status === 403 || e.status === 404)) {
        throw this.options.refused(e);
      }
      if (e instanceof NovaError && (e.status === 401 || e.status === 400 || e.status === 404)) {
        throw new NovaError({
          service: 'identity',
          status: e.status,
          method: 'POST',
          path,
          serviceMessage: e.serviceMessage,
          message: `Keystone at ${this.credentials.authUrl} refused ${describeCredentials(this.credentials)} from ${this.credentials.source}: ${e.serviceMessage} (POST ${path} answered ${e.status})`,
        });
      }
      throw e;
    }
    const bad = (problem: string) => new NovaResponseError({ service: 'identity', status: response.status, method: 'POST', path, serviceMessage: problem, problem });
    const value = response.headers.get('x-subject-token');
    if (!value) throw bad('no X-Subject-Token header');
    const body = response.body as { token?: { expires_at?: unknown; catalog?: unknown; user?: { id?: unknown }; project?: { id?: unknown } } } | null;
    const expiresText = body?.token?.expires_at;
    if (typeof expiresText !== 'string') throw bad('token.expires_at is missing');
    const expiresAt = parseKeystoneTime(expiresText);
    if (Number.isNaN(expiresAt)) throw bad(`token.expires_at '${expiresText}' is not a time`);
    const idOf = (ref: { id?: unknown } | undefined) => (typeof ref?.id === 'string' ? ref.id : null);
    const token: Token = {
      value,
      expiresAt,
      receivedAt: this.runtime.now(),
      catalog: parseCatalog(body?.token?.catalog),
      userId: idOf(body?.token?.user),
      projectId: idOf(body?.token?.project),
    };
    this.current = token;
    this.runtime.logger.debug?.(`Keystone token for ${describeCredentials(this.credentials)} valid until ${expiresText}`);
    return token;
  }
}
