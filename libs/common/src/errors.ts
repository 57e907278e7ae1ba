/**
 * Domain errors. Each carries a code; transports map codes in one place (the gateway's exception
 * filter to HTTP status + Senlin error body, the bus transport to ack / retry / dead-letter).
 * `type` is the exception class name Senlin reported in its error body.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'INVALID_SPEC'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'FORBIDDEN'
  | 'UNAUTHORIZED'
  | 'NOT_ACCEPTABLE'
  /** well-formed, but cannot be done as asked (an Idempotency-Key reused for another request) */
  | 'UNPROCESSABLE'
  /** over a limit on request rate or on unfinished actions: 429 with Retry-After */
  | 'TOO_MANY_REQUESTS'
  | 'UNAVAILABLE'
  | 'INTERNAL';

/**
 * The codes whose errors keep a stack trace: the ones logged with it (a 5xx). The others are a
 * caller's mistake or a refusal, answered and never logged with a stack, and capturing one
 * (async frames included) was 2 % of the gateway's CPU in an alarm storm, whose answers are
 * mostly refusals (BENCHMARKS.md, burst).
 */
const WITH_STACK: readonly ErrorCode[] = ['UNAVAILABLE', 'INTERNAL'];

export class DomainError extends Error {
  /** seconds a client should wait before trying again (the `Retry-After` of a 429) */
  retryAfter?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Senlin's exception class name for the error body (e.g. ResourceNotFound, ActionConflict) */
    readonly type: string = defaultType(code),
    /** transient errors may be retried by a consumer; permanent ones are dead-lettered */
    readonly transient = code === 'UNAVAILABLE' || code === 'TOO_MANY_REQUESTS',
  ) {
    const limit = Error.stackTraceLimit;
    if (!WITH_STACK.includes(code)) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'DomainError';
  }
}

function defaultType(code: ErrorCode): string {
  switch (code) {
    case 'BAD_REQUEST':
      return 'BadRequest';
    case 'INVALID_SPEC':
      return 'InvalidSpec';
    case 'NOT_FOUND':
      return 'ResourceNotFound';
    case 'CONFLICT':
      return 'ActionConflict';
    case 'FORBIDDEN':
      return 'Forbidden';
    case 'UNAUTHORIZED':
      return 'HTTPUnauthorized';
    case 'NOT_ACCEPTABLE':
      return 'InvalidGlobalAPIVersion';
    case 'UNAVAILABLE':
      return 'ServiceUnavailable';
    case 'UNPROCESSABLE':
      return 'UnprocessableEntity';
    case 'TOO_MANY_REQUESTS':
      return 'OverLimit';
    default:
      return 'InternalError';
  }
}

export const badRequest = (message: string, type = 'BadRequest') => new DomainError('BAD_REQUEST', message, type);
export const notFound = (kind: string, id: string) =>
  new DomainError('NOT_FOUND', `The ${kind} '${id}' could not be found.`, 'ResourceNotFound');
export const conflict = (message: string, type = 'ActionConflict') => new DomainError('CONFLICT', message, type);
export const forbidden = (message = 'You are not authorized to complete this operation.') =>
  new DomainError('FORBIDDEN', message, 'Forbidden');
export const unavailable = (message: string) => new DomainError('UNAVAILABLE', message, 'ServiceUnavailable', true);

/** A 429: `retryAfterSeconds` is rounded up to whole seconds, at least 1. */
export function tooManyRequests(message: string, retryAfterSeconds: number, type = 'OverLimit'): DomainError {
  const e = new DomainError('TOO_MANY_REQUESTS', message, type);
  e.retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  return e;
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
