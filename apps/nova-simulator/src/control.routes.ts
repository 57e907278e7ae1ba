import { parseFaultSpec } from './faults';
import { ApiError, isRecord, jsonBody, type SimRequest, type SimResponse } from './http-kit';
import type { SimulatorState } from './simulator-state';

/** Test controls under `/_sim` (no token): inspect state, move servers, inject faults, expire tokens. */
export function handleControl(req: SimRequest, sub: string, state: SimulatorState): SimResponse {
  try {
    return routeControl(req, sub.replace(/\/+$/, ''), state);
  } catch (e) {
    if (e instanceof ApiError) return { status: e.status, body: { error: { code: e.status, message: e.message } } };
    throw e;
  }
}

function routeControl(req: SimRequest, path: string, state: SimulatorState): SimResponse {
  const m = req.method;
  if (path === '/state' && m === 'GET') return { status: 200, body: state.snapshot() };
  const migrate = /^\/servers\/([^/]+)\/migrate$/.exec(path);
  if (migrate && m === 'POST') {
    const body = jsonBody(req);
    if (!isRecord(body) || typeof body.host !== 'string' || body.host === '') throw new ApiError(400, "'host' must be the name of a compute host");
    const s = state.migrate(decodeURIComponent(migrate[1]), body.host);
    return { status: 200, body: { server: { id: s.id, host: s.host?.name ?? null, zone: s.host?.zone ?? null } } };
  }
  if (path === '/faults') {
    if (m === 'POST') {
      const fault = state.faults.add(parseFaultSpec(jsonBody(req)));
      return { status: 201, body: { fault: state.faults.list().find((f) => f.id === fault.id) } };
    }
    if (m === 'GET') return { status: 200, body: { faults: state.faults.list() } };
    if (m === 'DELETE') {
      state.faults.clear();
      return { status: 204 };
    }
  }
  if (path === '/tokens/expire-all' && m === 'POST') return { status: 200, body: { expired: state.expireAllTokens() } };
  if (path === '/tokens/expire' && m === 'POST') {
    const body = jsonBody(req);
    if (!isRecord(body) || typeof body.token !== 'string') throw new ApiError(400, "'token' must be the token string to expire");
    if (!state.identity.expire(body.token)) throw new ApiError(404, 'no such token');
    return { status: 200, body: { expired: 1 } };
  }
  if (path === '/config' && m === 'POST') {
    const body = jsonBody(req);
    if (!isRecord(body)) throw new ApiError(400, 'body must be a JSON object');
    for (const k of Object.keys(body)) {
      if (k !== 'build_delay_ms' && k !== 'token_lifetime_seconds') {
        throw new ApiError(400, `'${k}' is not a known setting (allowed: build_delay_ms, token_lifetime_seconds)`);
      }
    }
    const d = body.build_delay_ms;
    if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > 3_600_000)) {
      throw new ApiError(400, "'build_delay_ms' must be a whole number between 0 and 3600000");
    }
    const t = body.token_lifetime_seconds;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 604_800)) {
      throw new ApiError(400, "'token_lifetime_seconds' must be a whole number between 1 and 604800");
    }
    if (d !== undefined) state.buildDelayMs = d;
    if (t !== undefined) state.identity.tokenLifetimeMs = t * 1000;
    return { status: 200, body: { config: (state.snapshot() as { config: unknown }).config } };
  }
  if (path === '/clock' && m === 'POST') {
    const body = jsonBody(req);
    const ms = isRecord(body) ? body.advance_ms : undefined;
    if (!isRecord(body) || Object.keys(body).some((k) => k !== 'advance_ms') || typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 86_400_000) {
      throw new ApiError(400, "'advance_ms' must be a whole number between 0 and 86400000 (and the only field)");
    }
    state.advanceClock(ms);
    return { status: 200, body: { now: new Date(state.now()).toISOString() } };
  }
  if (path === '/reset' && m === 'POST') {
    state.reset();
    return { status: 204 };
  }
  throw new ApiError(404, `no test control ${m} /_sim${path}`);
}
