import { ApiError, isRecord } from './http-kit';

/**
 * Injected failures for client retry tests. A fault matches by method and a path regex, fires
 * `times` times, and either answers at once (`when: "before"`, the request never reaches the API)
 * or lets the API act and then replaces its answer (`when: "after"`: the "created but the response
 * was lost" case). `delay_ms` alone only slows the matching requests down.
 */
export interface FaultSpec {
  method: string;
  path: string;
  status: number | null;
  times: number;
  retryAfter: number | null;
  body: unknown;
  delayMs: number;
  when: 'before' | 'after';
}

export interface Fault extends FaultSpec {
  id: number;
  pattern: RegExp;
  remaining: number;
  fired: number;
}

const METHODS = ['*', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function field(message: string): ApiError {
  return new ApiError(400, message);
}

/** Validates `POST /_sim/faults`; every error names the field. */
export function parseFaultSpec(raw: unknown): FaultSpec {
  if (!isRecord(raw)) throw field('body must be a JSON object');
  const known = ['method', 'path', 'status', 'times', 'retry_after', 'body', 'delay_ms', 'when'];
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw field(`'${k}' is not a known field (allowed: ${known.join(', ')})`);
  const method = raw.method === undefined ? '*' : raw.method;
  if (typeof method !== 'string' || !METHODS.includes(method.toUpperCase())) {
    throw field(`'method' must be one of ${METHODS.join(', ')}`);
  }
  if (typeof raw.path !== 'string' || raw.path === '') throw field("'path' must be a non-empty regular expression string");
  try {
    new RegExp(raw.path);
  } catch (e) {
    throw field(`'path' is not a valid regular expression: ${(e as Error).message}`);
  }
  const status = raw.status === undefined || raw.status === null ? null : raw.status;
  if (status !== null && (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)) {
    throw field("'status' must be an HTTP status code between 200 and 599");
  }
  const times = raw.times === undefined ? 1 : raw.times;
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 1) throw field("'times' must be a whole number >= 1");
  const retryAfter = raw.retry_after === undefined || raw.retry_after === null ? null : raw.retry_after;
  if (retryAfter !== null && (typeof retryAfter !== 'number' || !Number.isInteger(retryAfter) || retryAfter < 0)) {
    throw field("'retry_after' must be a whole number of seconds >= 0");
  }
  const delayMs = raw.delay_ms === undefined ? 0 : raw.delay_ms;
  if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > 600_000) {
    throw field("'delay_ms' must be a whole number of milliseconds between 0 and 600000");
  }
  const when = raw.when === undefined ? 'before' : raw.when;
  if (when !== 'before' && when !== 'after') throw field("'when' must be 'before' or 'after'");
  if (status === null && delayMs === 0) throw field("a fault needs a 'status', a 'delay_ms' or both");
  if (when === 'after' && status === null) throw field("'when': 'after' needs a 'status' to replace the answer with");
  return { method: method.toUpperCase(), path: raw.path, status, times, retryAfter, body: raw.body, delayMs, when };
}

export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;

  add(spec: FaultSpec): Fault {
    const fault: Fault = { ...spec, id: this.nextId++, pattern: new RegExp(spec.path), remaining: spec.times, fired: 0 };
    this.faults.push(fault);
    return fault;
  }

  /** Takes one shot of the first fault matching the request, if any. */
  take(method: string, path: string): Fault | null {
    const fault = this.faults.find((f) => f.remaining > 0 && (f.method === '*' || f.method === method) && f.pattern.test(path));
    if (!fault) return null;
    fault.remaining -= 1;
    fault.fired += 1;
    return fault;
  }

  clear(): void {
    this.faults = [];
  }

  list(): Record<string, unknown>[] {
    return this.faults.map((f) => ({
      id: f.id,
      method: f.method,
      path: f.path,
      status: f.status,
      times: f.times,
      remaining: f.remaining,
      fired: f.fired,
      retry_after: f.retryAfter,
      delay_ms: f.delayMs,
      when: f.when,
    }));
  }
}
