import * as http from 'node:http';
import * as https from 'node:https';
import { currentOpenStackRequestId } from '@trellis/common/log-context';
import { openstackRequestDuration, openstackRequests, secondsSince, statusClass } from '@trellis/observability/metrics';
import { NovaError, NovaForbiddenError, parseErrorBody, type OpenStackService } from './openstack.errors';

export interface RetryOptions {
  /** tries in all (first call included) for 5xx, timeouts, connection errors, 429 and 413 */
  attempts: number;
  /** backoff before retry n is random(0, min(maxDelayMs, baseDelayMs * 2^n)) ("full jitter") */
  baseDelayMs: number;
  maxDelayMs: number;
  /** tries in all for 409 on requests that may repeat (Nova answers 409 during a task state) */
  conflictAttempts: number;
  /** a Retry-After longer than this is not waited for: the call fails and the caller decides */
  maxRetryAfterMs: number;
  /**
   * After a create whose outcome is unknown (it timed out), how long at least to wait before looking
   * for what it made: the request may still be in Nova's hands and land a moment after the client gave
   * up; a look right away finds nothing and boots a second server (the fault suite saw it).
   */
  ambiguousSettleMs?: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 5000,
  conflictAttempts: 5,
  maxRetryAfterMs: 60_000,
  ambiguousSettleMs: 5_000,
};

export interface NovaLogger {
  debug?(message: string): void;
  warn?(message: string): void;
}

/** The headers of an answer; names are case-insensitive. */
export interface ResponseHeaders {
  get(name: string): string | null;
}

/** One HTTP exchange as the transport makes it: the whole body in, the whole body out. */
export interface WireRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface WireResponse {
  status: number;
  headers: ResponseHeaders;
  text: string;
}

/** The side effects the client depends on, injectable for tests. */
export interface Runtime {
  exchange: (request: WireRequest) => Promise<WireResponse>;
  now(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
  logger: NovaLogger;
}

// Connections to Keystone and Nova are kept open between requests (a worker makes several per action).
// An idle one is closed after 4 s, before the usual 5 s of API servers, so a request rarely meets a
// connection the server is closing (should it, a create is ambiguous and found by its tag, see idempotency.ts).
const agentOptions = { keepAlive: true, maxSockets: 64, timeout: 4_000 };
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

/**
 * An exchange over node:http(s). The global fetch did the same work with about twice the CPU per
 * request (Request/Response objects, web streams for a body read whole anyway), and the worker
 * makes several requests per action. TLS trusts the system's CAs and NODE_EXTRA_CA_CERTS, as fetch did.
 */
export function nodeHttpExchange(request: WireRequest): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const secure = url.protocol === 'https:';
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
    const req = (secure ? https : http).request(
      url,
      { method: request.method, headers, agent: secure ? agents.https : agents.http, signal: request.signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: new IncomingHeaders(res.headers), text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

class IncomingHeaders implements ResponseHeaders {
  constructor(private readonly headers: http.IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }
}

export const defaultRuntime = (): Runtime => ({
  exchange: nodeHttpExchange,
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
  logger: {},
});

export function backoffDelay(retryIndex: number, retry: RetryOptions, random: () => number): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** retryIndex);
  return Math.floor(random() * ceiling);
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null || value.trim() === '') return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

export interface HttpRequest {
  service: OpenStackService;
  /** what the request does, for the metrics: `servers.create`, `tokens.issue`… (a small fixed set, never an id) */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** statuses handed back to the caller instead of thrown (e.g. 404 on a lookup) */
  accept?: number[];
  /**
   * the request may be repeated when its outcome is unknown (timeout, reset, 5xx). False for
   * creates: repeating one could boot a second server, so only failures that surely did not reach
   * the service (connection refused, 429, 413) are retried and the rest are thrown as ambiguous.
   */
  idempotent: boolean;
  /** retry 409 (transitional task state) up to RetryOptions.conflictAttempts */
  retryConflicts?: boolean;
}

/** OpenStack's request id header; sent, it is the caller's global request id (oslo.middleware's request_id). */
export const REQUEST_ID_HEADER = 'X-OpenStack-Request-ID';

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body: unknown;
}

const NOT_RETRIED_5XX = new Set([501, 505]);

class NetworkFailure extends Error {
  constructor(
    message: string,
    /** the connection was refused: the request surely never reached the service */
    readonly refused: boolean,
  ) {
    super(message);
  }
}

/** One HTTP call with a timeout, bounded retries and typed errors. No auth: see KeystoneSession. */
export class HttpTransport {
  constructor(
    private readonly runtime: Runtime,
    private readonly retry: RetryOptions,
    private readonly timeoutMs: number,
  ) {}

  async send(request: HttpRequest): Promise<HttpResponse> {
    const path = pathOf(request.url);
    let failures = 0;
    let conflicts = 0;
    for (;;) {
      let response: HttpResponse;
      try {
        response = await this.once(request);
      } catch (e) {
        if (!(e instanceof NetworkFailure)) throw e;
        failures++;
        const error = new NovaError({
          service: request.service,
          status: null,
          method: request.method,
          path,
          serviceMessage: e.message,
          ambiguous: !e.refused,
        });
        if ((request.idempotent || e.refused) && failures < this.retry.attempts) {
          await this.pause(error, backoffDelay(failures - 1, this.retry, this.runtime.random), failures);
          continue;
        }
        throw error;
      }

      const { status } = response;
      if ((status >= 200 && status < 300) || request.accept?.includes(status)) return response;
      const error = errorFor(request, path, response);

      if (status === 429 || status === 413) {
        failures++;
        if (failures >= this.retry.attempts) throw error;
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'), this.runtime.now());
        if (retryAfter !== null && retryAfter > this.retry.maxRetryAfterMs) {
          throw new NovaError({
            service: request.service,
            status,
            method: request.method,
            path,
            serviceMessage: `${error.serviceMessage} (asked to retry after ${Math.ceil(retryAfter / 1000)} s, more than the ${Math.ceil(this.retry.maxRetryAfterMs / 1000)} s this client waits)`,
          });
        }
        await this.pause(error, retryAfter ?? backoffDelay(failures - 1, this.retry, this.runtime.random), failures);
        continue;
      }
      if (status >= 500 && !NOT_RETRIED_5XX.has(status)) {
        failures++;
        if (request.idempotent && failures < this.retry.attempts) {
          await this.pause(error, backoffDelay(failures - 1, this.retry, this.runtime.random), failures);
          continue;
        }
        throw new NovaError({ ...detailsOf(error), ambiguous: !request.idempotent });
      }
      if (status === 409 && request.retryConflicts) {
        conflicts++;
        if (conflicts < this.retry.conflictAttempts) {
          await this.pause(error, backoffDelay(conflicts - 1, this.retry, this.runtime.random), conflicts, this.retry.conflictAttempts);
          continue;
        }
      }
      throw error;
    }
  }

  private async pause(error: NovaError, delayMs: number, attempt: number, of = this.retry.attempts): Promise<void> {
    this.runtime.logger.warn?.(`${error.message}; try ${attempt + 1}/${of} in ${delayMs} ms`);
    await this.runtime.sleep(delayMs);
  }

  private async once(request: HttpRequest): Promise<HttpResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const started = process.hrtime.bigint();
    let status: number | null = null;
    try {
      const headers: Record<string, string> = { Accept: 'application/json', ...request.headers };
      // the request that started this work, as OpenStack's global request id: Nova logs it beside its own
      const requestId = currentOpenStackRequestId();
      if (requestId) headers[REQUEST_ID_HEADER] = requestId;
      let body: string | undefined;
      if (request.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(request.body);
      }
      const res = await this.runtime.exchange({ method: request.method, url: request.url, headers, body, signal: controller.signal });
      status = res.status;
      return { status: res.status, headers: res.headers, body: parseBody(res.text, res.headers.get('content-type')) };
    } catch (e) {
      if (timedOut) throw new NetworkFailure(`no answer within ${this.timeoutMs} ms`, false);
      // node:http puts the system error on the error itself; fetch put it on `cause`
      const error = e as { code?: unknown; message?: string; cause?: { code?: string; message?: string } };
      const code = error.cause?.code ?? (typeof error.code === 'string' ? error.code : '');
      const detail = error.cause?.message ?? error.message ?? String(e);
      throw new NetworkFailure(`connection failed (${code ? `${code}: ` : ''}${detail})`, code === 'ECONNREFUSED');
    } finally {
      clearTimeout(timer);
      const labels = { service: request.service, operation: request.operation };
      openstackRequests.inc({ ...labels, status_class: statusClass(status) });
      openstackRequestDuration.observe(labels, secondsSince(started));
    }
  }
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return null;
  const looksJson = (contentType ?? '').includes('json') || /^\s*[[{]/.test(text);
  if (!looksJson) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}

function detailsOf(error: NovaError) {
  return {
    service: error.service,
    status: error.status,
    method: error.method,
    path: error.path,
    serviceMessage: error.serviceMessage,
  };
}

export function errorFor(request: Pick<HttpRequest, 'service' | 'method'>, path: string, response: HttpResponse): NovaError {
  const details = {
    service: request.service,
    status: response.status,
    method: request.method,
    path,
    serviceMessage: parseErrorBody(response.body, `HTTP ${response.status} with no message`),
  };
  return response.status === 403 ? new NovaForbiddenError(details) : new NovaError(details);
}
