import { RecentMap, type AuthContext, type OpenStackSettings } from '@trellis/common';
import type { TokenValidator } from '../identity.port';
import { parseKeystoneTime, type KeystoneSession } from './keystone-session';
import { createSession, type KeystoneClientOptions } from './session';
import type { Runtime } from './http-transport';

export interface TokenValidatorOptions extends KeystoneClientOptions {
  /** most tokens remembered at once (default 1000); the least recently used go first */
  cacheSize?: number;
  /**
   * a valid answer is reused until the token expires, but no longer than this (default 5 min, as
   * keystonemiddleware), so a revoked token stops working within that time
   */
  maxCacheAgeMs?: number;
  /**
   * the project (name or id) whose `admin` role makes a cloud admin (TRELLIS_ADMIN_PROJECT,
   * default `admin`); `admin` in any other project administers only that project
   */
  adminProject?: string;
}

interface CacheEntry {
  context: AuthContext;
  until: number;
}

/**
 * What a Keystone token can look like (Fernet and JWS tokens are base64url, UUID tokens hex):
 * printable ASCII, without spaces, and far shorter than 8 KiB. Anything else is no token, answered
 * without asking Keystone: over RPC a token is any JSON string, and one that cannot be an HTTP header
 * value made the request to Keystone fail, which was answered 503 "try again later" instead of 401
 * (found by the fuzz suite).
 */
const KEYSTONE_TOKEN = /^[\x21-\x7e]{1,8192}$/;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Validates callers' tokens with Keystone (`GET /v3/auth/tokens`, the service's own token in
 * X-Auth-Token and the caller's in X-Subject-Token). Project-scoped tokens work in their project;
 * a system-scoped token (`system: {all: true}`) works in no project (projectId ''), which is for a
 * cloud admin's cross-project reads; unscoped and domain-scoped tokens are not valid here.
 */
export class KeystoneTokenValidator implements TokenValidator {
  private readonly cache: RecentMap<string, CacheEntry>;

  constructor(
    private readonly session: KeystoneSession,
    private readonly runtime: Runtime,
    cacheSize: number,
    private readonly maxCacheAgeMs: number,
    private readonly adminProject: string,
  ) {
    this.cache = new RecentMap(cacheSize);
  }

  async validate(token: string): Promise<AuthContext | null> {
    if (typeof token !== 'string' || !KEYSTONE_TOKEN.test(token)) return null;
    const now = this.runtime.now();
    const hit = this.cache.get(token);
    if (hit) {
      if (now < hit.until) return hit.context;
      this.cache.delete(token);
    }
    const res = await this.session.request({
      service: 'identity',
      operation: 'tokens.validate',
      method: 'GET',
      url: `${this.session.credentials.authUrl}/auth/tokens?nocatalog`,
      headers: { 'X-Subject-Token': token },
      accept: [401, 404],
      idempotent: true,
    });
    if (res.status === 401 || res.status === 404) return null;
    const context = toContext(token, obj(res.body)?.token, this.adminProject);
    if (!context || context.expiresAt.getTime() <= now) return null;
    this.cache.set(token, { context, until: Math.min(context.expiresAt.getTime(), now + this.maxCacheAgeMs) });
    return context;
  }

  /** how many tokens are remembered */
  get size(): number {
    return this.cache.size;
  }
}

function toContext(token: string, raw: unknown, adminProject: string): AuthContext | null {
  const t = obj(raw);
  const user = obj(t?.user);
  const project = obj(t?.project);
  const systemScope = obj(t?.system)?.all === true ? 'all' : null;
  const expires = str(t?.expires_at);
  if (!t || !user || (!project && !systemScope) || !expires) return null;
  const userId = str(user.id);
  const projectId = project ? str(project.id) : '';
  const expiresAt = parseKeystoneTime(expires);
  if (!userId || projectId === null || Number.isNaN(expiresAt)) return null;
  const roles = (Array.isArray(t.roles) ? t.roles : []).map((r) => str(obj(r)?.name)).filter((r): r is string => r !== null);
  const projectName = project ? (str(project.name) ?? projectId) : '';
  const hasAdmin = roles.some((r) => r.toLowerCase() === 'admin');
  // a name is unique within its domain only; the admin project is looked for by id or by name
  const isAdminProject = project !== null && (projectId === adminProject || projectName === adminProject);
  return {
    token,
    userId,
    userName: str(user.name) ?? userId,
    projectId,
    projectName,
    domainId: str(obj(project?.domain)?.id) ?? str(obj(user.domain)?.id),
    roles,
    isAdmin: hasAdmin && (isAdminProject || systemScope === 'all'),
    isProjectAdmin: hasAdmin && project !== null,
    systemScope,
    isAdminProject,
    expiresAt: new Date(expiresAt),
  };
}

/** A TokenValidator for these settings (the service's own credentials). Throws ConfigError naming a missing setting. */
export function createTokenValidator(settings: OpenStackSettings, options: TokenValidatorOptions = {}): KeystoneTokenValidator {
  const { session, resolved } = createSession(settings, options);
  const cacheSize = options.cacheSize ?? 1000;
  const maxCacheAgeMs = options.maxCacheAgeMs ?? 300_000;
  if (!Number.isInteger(cacheSize) || cacheSize < 1) throw new RangeError(`cacheSize must be a whole number >= 1, got ${cacheSize}`);
  return new KeystoneTokenValidator(session, resolved.runtime, cacheSize, maxCacheAgeMs, options.adminProject ?? 'admin');
}
