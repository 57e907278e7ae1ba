import type { AuthContext } from '@trellis/common';
import type { ApiVersion } from './api-version';

/**
 * The slice of Express's request/response the gateway uses. `@types/express` is not installed, so
 * these keep the code typed without it.
 */
export interface HttpRequest {
  method: string;
  url: string;
  originalUrl: string;
  path: string;
  protocol: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  params: Record<string, string>;
  body: unknown;
  get(name: string): string | undefined;
  /** set by the request-context middleware */
  trellis?: RequestContext;
}

export interface HttpResponse {
  headersSent: boolean;
  /** the status set so far (a route's @HttpCode is set before its handler runs) */
  statusCode: number;
  status(code: number): HttpResponse;
  setHeader(name: string, value: string): void;
  getHeader(name: string): unknown;
  json(body: unknown): void;
  send(body?: unknown): void;
  type(t: string): HttpResponse;
  append(name: string, value: string): void;
  on(event: 'finish', listener: () => void): unknown;
}

export type NextFn = (err?: unknown) => void;

/** What the gateway learns about a request before a controller sees it. */
export interface RequestContext {
  /** `req-<uuid>`, returned as X-Openstack-Request-Id and used as the correlation id of messages */
  requestId: string;
  /** scheme://host[/prefix] without a trailing slash; hrefs and Location headers start with it */
  baseUrl: string;
  /** set by the API guard on /v1 routes */
  version?: ApiVersion;
  /** set by the API guard on authenticated routes */
  caller?: AuthContext;
  /** set by the policy guard: whether the caller passes a policy rule (docs/SECURITY.md) */
  allows?: (rule: string) => boolean;
}
