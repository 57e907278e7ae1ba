import type { IncomingHttpHeaders } from 'node:http';

/** One request as the route handlers see it: body already read, not yet parsed. */
export interface SimRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** An error a handler raises; each API formats it its own way (Nova fault, Keystone error). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The request body as JSON; `undefined` when empty. A malformed body is a 400. */
export function jsonBody(req: SimRequest): unknown {
  if (req.rawBody.trim() === '') return undefined;
  try {
    return JSON.parse(req.rawBody);
  } catch {
    throw new ApiError(400, 'Malformed request body');
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

/** Python-ish rendering of a value, as jsonschema messages in Nova show it. */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isRecord(v)) return `{${Object.entries(v).map(([k, x]) => `'${k}': ${pyRepr(x)}`).join(', ')}}`;
  return String(v);
}

/**
 * A 400 shaped like Nova's JSON-schema validation errors. Nova formats the value with `%s`: a
 * string appears without quotes (`Value: cirros-fake.`), anything else as Python shows it.
 */
export function schemaError(field: string, value: unknown, problem: string): ApiError {
  const shown = typeof value === 'string' ? value : pyRepr(value);
  return new ApiError(400, `Invalid input for field/attribute ${field}. Value: ${shown}. ${problem}`);
}

/** Nova's timestamp format for `created`/`updated`: seconds, trailing Z. */
export const novaTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Nova's format for `OS-SRV-USG:*` and service `updated_at`: microseconds, no zone. */
export const novaMicroTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000');
/** Keystone's `expires_at`/`issued_at`. */
export const keystoneTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export function queryFlag(query: URLSearchParams, ...names: string[]): boolean {
  for (const n of names) {
    const v = query.get(n);
    if (v === null) continue;
    // Nova treats a bare `?all_tenants` as true.
    if (v === '' || /^(1|t|true|on|y|yes)$/i.test(v)) return true;
  }
  return false;
}
