import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isDomainError, type Logger } from '@trellis/common';
import { isDatabaseUnavailable } from '../infra/persistence.adapter';
import { HTTP_TYPE, STATUS_OF, senlinErrorBody, type SenlinErrorBody } from './error-body';
import type { HttpRequest, HttpResponse } from './http.types';

const ROUTE_NOT_FOUND = 'The resource could not be found.';

/**
 * The `Retry-After` of every 503, in seconds: what is missing (the database, Keystone) is a
 * dependency that usually comes back within seconds, and clients that honour it back off.
 */
export const RETRY_AFTER_SECONDS = 5;

export const DATABASE_UNAVAILABLE = 'The database is unavailable; try again later.';

/** An error as a transport answers it: Senlin's body, its status, and when to try again (503). */
export interface DescribedError {
  status: number;
  body: SenlinErrorBody;
  /** seconds, set on 503 and 429: the `Retry-After` header */
  retryAfter?: number;
}

/**
 * The one place where errors become HTTP: domain error codes map to a status and Senlin's error
 * body; anything unexpected is a 500 whose error id is logged with the stack and returned without it.
 */
@Catch()
export class SenlinExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    writeError(exception, http.getRequest<HttpRequest>(), http.getResponse<HttpResponse>(), this.logger);
  }
}

export function writeError(exception: unknown, req: HttpRequest, res: HttpResponse, logger: Logger): void {
  const { status, body, retryAfter } = describeError(exception, logger, { request_id: req.trellis?.requestId, method: req.method, path: redactWebhook(req.path) });
  if (res.headersSent) return;
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  res.status(status).json(body);
}

/**
 * The status and Senlin error body for anything thrown while serving a request, whatever the
 * transport (HTTP here, RPC replies in rpc/). `context` goes into the log line of a 5xx.
 */
export function describeError(
  exception: unknown,
  logger: Logger,
  context: { request_id?: string } & Record<string, unknown>,
): DescribedError {
  const described = describe(exception, logger, context);
  if (described.status === 503) return { ...described, retryAfter: RETRY_AFTER_SECONDS };
  if (described.status === 429 && isDomainError(exception) && exception.retryAfter !== undefined) return { ...described, retryAfter: exception.retryAfter };
  return described;
}

function describe(exception: unknown, logger: Logger, context: Record<string, unknown>): DescribedError {
  if (isDatabaseUnavailable(exception)) {
    // logged without an error id: the cause is known, and the same outage would flood the log with stacks
    logger.warn('database unavailable', { ...context, error: exception instanceof Error ? exception.message : String(exception) });
    return { status: 503, body: senlinErrorBody(503, DATABASE_UNAVAILABLE, 'ServiceUnavailable') };
  }
  if (isDomainError(exception)) {
    const status = STATUS_OF[exception.code];
    if (status >= 500) {
      const errorId = randomUUID();
      logger.error('request failed', { ...context, error_id: errorId, type: exception.type, message: exception.message });
      return { status, body: senlinErrorBody(status, exception.message, exception.type, errorId) };
    }
    return { status, body: senlinErrorBody(status, exception.message, exception.type) };
  }
  const refused = bodyParserRefusal(exception);
  if (refused !== null) return { status: refused.status, body: senlinErrorBody(refused.status, refused.message, refused.type) };
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    const status = exception.getStatus();
    const message = status === 404 ? ROUTE_NOT_FOUND : exception.message;
    return { status, body: senlinErrorBody(status, message, HTTP_TYPE[status] ?? 'HTTPError') };
  }
  const errorId = randomUUID();
  logger.error('unexpected error', {
    ...context,
    error_id: errorId,
    error: exception instanceof Error ? exception.message : String(exception),
    stack: exception instanceof Error ? exception.stack : undefined,
  });
  return {
    status: 500,
    body: senlinErrorBody(500, `An unexpected error occurred (error id ${errorId}).`, 'InternalError', errorId),
  };
}

/**
 * A body the parser refused (body-parser, raw-body): errors with `type` `entity.*` or the charset and
 * encoding ones, and their status (400 bad JSON, 413 too large, 415 charset or encoding), or
 * http-errors' 4xx without a type: a body that does not decompress as its Content-Encoding says
 * (zlib's error, which body-parser wraps in a 400 and which was a 500 before).
 */
function bodyParserRefusal(e: unknown): { status: number; message: string; type: string } | null {
  if (typeof e !== 'object' || e === null) return null;
  const { type, status, expose, length, limit } = e as { type?: unknown; status?: unknown; expose?: unknown; length?: unknown; limit?: unknown };
  const clientStatus = typeof status === 'number' && status >= 400 && status < 500 ? status : null;
  const parserType = typeof type === 'string' && (type.startsWith('entity.') || type === 'encoding.unsupported' || type === 'charset.unsupported');
  if (!parserType && !(expose === true && clientStatus !== null)) return null;
  const code = clientStatus ?? 400;
  if (code === 413) return { status: 413, message: tooLargeMessage(length, limit), type: 'RequestLimitExceeded' };
  return { status: code, message: `Malformed request body: ${(e as Error).message}`, type: HTTP_TYPE[code] ?? 'HTTPBadRequest' };
}

/** As Senlin's `JSON body size (N bytes) exceeds maximum allowed size (M bytes).`; a chunked body's size is not known. */
function tooLargeMessage(length: unknown, limit: unknown): string {
  const max = typeof limit === 'number' ? ` (${limit} bytes)` : '';
  return typeof length === 'number'
    ? `Request body size (${length} bytes) exceeds the maximum allowed size${max}.`
    : `Request body exceeds the maximum allowed size${max}.`;
}

/** A webhook's path holds its credential (the receiver id, docs/SECURITY.md): never logged. */
export function redactWebhook(path: string): string {
  return path.replace(/\/webhooks\/[^/]+/, '/webhooks/<redacted>');
}
