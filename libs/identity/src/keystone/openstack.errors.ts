import { DomainError, type ErrorCode } from '@trellis/common';

export type OpenStackService = 'compute' | 'identity' | 'image' | 'network';

const SERVICE_LABEL: Record<OpenStackService, string> = { compute: 'Nova', identity: 'Keystone', image: 'Glance', network: 'Neutron' };

function codeFor(status: number | null): ErrorCode {
  if (status === null || status >= 500 || status === 429 || status === 413) return 'UNAVAILABLE';
  if (status === 400) return 'BAD_REQUEST';
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  return 'INTERNAL';
}

export interface NovaErrorDetails {
  service: OpenStackService;
  /** HTTP status; null when no answer came (timeout, connection error) */
  status: number | null;
  method: string;
  /** path and query of the request, e.g. /v2.1/servers/abc */
  path: string;
  /** the message from Nova's or Keystone's error body (or the network failure) */
  serviceMessage: string;
  /**
   * true when the request may have taken effect although no success came back (timeout, reset
   * connection, 5xx): a create must look before it tries again.
   */
  ambiguous?: boolean;
  message?: string;
}

/**
 * A failed call to an OpenStack service (Nova, Keystone, Glance, Neutron; the name is from when Nova
 * was the only one). The domain code follows the HTTP status, so the bus transport retries
 * transient failures (5xx, timeouts, 429) and dead-letters the rest.
 */
export class NovaError extends DomainError {
  readonly service: OpenStackService;
  readonly status: number | null;
  readonly method: string;
  readonly path: string;
  readonly serviceMessage: string;
  readonly ambiguous: boolean;

  constructor(details: NovaErrorDetails) {
    const code = codeFor(details.status);
    super(code, details.message ?? NovaError.describe(details), undefined, code === 'UNAVAILABLE');
    this.name = 'NovaError';
    this.service = details.service;
    this.status = details.status;
    this.method = details.method;
    this.path = details.path;
    this.serviceMessage = details.serviceMessage;
    this.ambiguous = details.ambiguous ?? false;
  }

  static describe(d: Pick<NovaErrorDetails, 'service' | 'status' | 'method' | 'path' | 'serviceMessage'>): string {
    const who = SERVICE_LABEL[d.service];
    const what = d.status === null ? 'failed' : `answered ${d.status}`;
    return `${who} ${d.method} ${d.path} ${what}: ${d.serviceMessage}`;
  }
}

/** 403: the credentials lack a role (listing hypervisors needs admin). */
export class NovaForbiddenError extends NovaError {
  constructor(details: NovaErrorDetails) {
    super(details);
    this.name = 'NovaForbiddenError';
  }
}

/** Nova or Keystone answered, but not in a shape the client understands. */
export class NovaResponseError extends NovaError {
  constructor(details: Omit<NovaErrorDetails, 'message'> & { problem: string }) {
    super({
      ...details,
      message: `${SERVICE_LABEL[details.service]} ${details.method} ${details.path} answered an unexpected body: ${details.problem}`,
    });
    this.name = 'NovaResponseError';
  }
}

export const isNovaError = (e: unknown): e is NovaError => e instanceof NovaError;

/**
 * Nova wraps its message in a one-key object named after the fault (`{"itemNotFound": {"code":
 * 404, "message": "..."}}`, `conflictingRequest`, `badRequest`, `forbidden`, `computeFault`,
 * `overLimit`); Keystone uses `{"error": {"message", "title"}}`; some proxies answer with text.
 */
export function parseErrorBody(body: unknown, fallback: string): string {
  if (typeof body === 'string') {
    const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
    return text ? truncate(text) : fallback;
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const obj = body as Record<string, unknown>;
    if (typeof obj.message === 'string') return truncate(obj.message);
    if (Array.isArray(obj.errors) && obj.errors.length > 0) {
      const first = obj.errors[0] as Record<string, unknown>;
      const text = first?.detail ?? first?.title;
      if (typeof text === 'string') return truncate(text);
    }
    for (const value of Object.values(obj)) {
      if (value && typeof value === 'object' && typeof (value as Record<string, unknown>).message === 'string') {
        return truncate((value as Record<string, string>).message);
      }
    }
  }
  return fallback;
}

function truncate(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
