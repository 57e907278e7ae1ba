import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError, isRecord, keystoneTime } from './http-kit';

/**
 * The Keystone side of the simulator: four projects, five users, their role assignments, tokens,
 * application credentials and trusts (OS-TRUST). Ids are stable hashes so they survive restarts.
 */

export const DEFAULT_DOMAIN = { id: 'default', name: 'Default' };

/** 32 hex characters, derived from the name: the same on every run, like a long-lived Keystone. */
export const stableId = (kind: string, name: string): string =>
  createHash('sha256').update(`trellis-simulator:${kind}:${name}`).digest('hex').slice(0, 32);

export interface Project {
  id: string;
  name: string;
}

export interface User {
  id: string;
  name: string;
  password: string;
  defaultProjectId: string;
}

export interface Role {
  id: string;
  name: string;
}

export interface TokenRecord {
  id: string;
  userId: string;
  projectId: string;
  roles: string[];
  methods: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  applicationCredential: { id: string; name: string } | null;
  /** set on a token issued from a trust (`scope: {"OS-TRUST:trust": {id}}`) */
  trust: TokenTrust | null;
}

export interface TokenTrust {
  id: string;
  trustorUserId: string;
  trusteeUserId: string;
  impersonation: boolean;
}

/** An OS-TRUST delegation: the trustor lends some of its roles on a project to the trustee. */
export interface Trust {
  id: string;
  trustorUserId: string;
  trusteeUserId: string;
  projectId: string;
  impersonation: boolean;
  /** role names as delegated (without the roles they imply) */
  roles: string[];
  expiresAt: number | null;
  remainingUses: number | null;
}

export interface ApplicationCredential {
  id: string;
  name: string;
  description: string | null;
  secret: string;
  userId: string;
  projectId: string;
  roles: string[];
  expiresAt: number | null;
}

/** Who is calling, resolved from a valid token. */
export interface Caller {
  token: TokenRecord;
  user: User;
  project: Project;
  isAdmin: boolean;
}

const UNAUTHENTICATED = 'The request you have made requires authentication.';

const ROLE_NAMES = ['admin', 'member', 'reader', 'service'] as const;

/** Keystone's default implied roles: admin → member → reader. */
const IMPLIES: Record<string, string[]> = { admin: ['member'], member: ['reader'] };

/** A role with the roles it implies, transitively, in Keystone's order (the role first). */
export function withImpliedRoles(roles: string[]): string[] {
  const out: string[] = [];
  const visit = (r: string) => {
    if (out.includes(r)) return;
    out.push(r);
    (IMPLIES[r] ?? []).forEach(visit);
  };
  roles.forEach(visit);
  return out;
}

const forbidden = (action: string) => new ApiError(403, `You are not authorized to perform the requested action: ${action}.`);
const trustNotFound = (id: string) => new ApiError(404, `Could not find trust: ${id}.`);

/** A global role as Keystone shows it in trusts and trust-scoped tokens. */
function roleRef(name: string) {
  return { id: stableId('role', name), name, domain_id: null, description: null, options: { immutable: true } };
}

function bad(message: string): ApiError {
  return new ApiError(400, message);
}

function unauthorized(message = UNAUTHENTICATED): ApiError {
  return new ApiError(401, message);
}

export interface IdentityOptions {
  adminPassword: string;
  demoPassword: string;
  /** the password of `trellis`, the service user that trusts delegate to */
  servicePassword: string;
  tokenLifetimeMs: number;
  now: () => number;
}

export class IdentityStore {
  readonly projects: Project[];
  readonly users: User[];
  readonly roles: Role[] = ROLE_NAMES.map((name) => ({ id: stableId('role', name), name }));
  tokenLifetimeMs: number;
  private readonly assignments = new Map<string, string[]>();
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly appCredentials = new Map<string, ApplicationCredential>();
  private readonly trusts = new Map<string, Trust>();

  constructor(private readonly options: IdentityOptions) {
    this.tokenLifetimeMs = options.tokenLifetimeMs;
    const project = (name: string): Project => ({ id: stableId('project', name), name });
    this.projects = [project('admin'), project('demo'), project('alt_demo'), project('service')];
    const [admin, demo, altDemo, service] = this.projects;
    const user = (name: string, password: string, p: Project): User => ({
      id: stableId('user', name),
      name,
      password,
      defaultProjectId: p.id,
    });
    this.users = [
      user('admin', options.adminPassword, admin),
      user('demo', options.demoPassword, demo),
      user('alt_demo', options.demoPassword, altDemo),
      user('trellis', options.servicePassword, service),
      user('viewer', options.demoPassword, demo),
    ];
    // As the reference cloud: admin is admin on its project and on demo; `member` implies `reader`.
    this.assign('admin', 'admin', ['admin', 'member', 'reader']);
    this.assign('admin', 'demo', ['admin', 'member', 'reader']);
    this.assign('demo', 'demo', ['member', 'reader']);
    this.assign('alt_demo', 'alt_demo', ['member', 'reader']);
    // the service user of the reference cloud (trustee of every trust), and a read-only user
    this.assign('trellis', 'service', ['admin', 'member', 'service', 'reader']);
    this.assign('viewer', 'demo', ['reader']);
  }

  /** Test hook: take roles away from (or give them to) a user on a project, as `openstack role remove` does. */
  setRoles(userId: string, projectId: string, roles: string[]): void {
    this.assignments.set(`${userId}/${projectId}`, withImpliedRoles(roles));
  }

  private assign(userName: string, projectName: string, roles: string[]): void {
    this.assignments.set(`${stableId('user', userName)}/${stableId('project', projectName)}`, roles);
  }

  rolesOn(userId: string, projectId: string): string[] {
    return this.assignments.get(`${userId}/${projectId}`) ?? [];
  }

  projectById(id: string): Project | undefined {
    return this.projects.find((p) => p.id === id);
  }

  projectByName(name: string): Project | undefined {
    return this.projects.find((p) => p.name === name);
  }

  userById(id: string): User | undefined {
    return this.users.find((u) => u.id === id);
  }

  /** `POST /v3/auth/tokens`: returns the new token or throws the Keystone error. */
  authenticate(body: unknown): TokenRecord {
    if (!isRecord(body) || !isRecord(body.auth)) throw bad("Invalid input for field 'auth': 'auth' is a required property");
    const auth = body.auth;
    if (!isRecord(auth.identity)) throw bad("Invalid input for field 'identity': 'identity' is a required property");
    const identity = auth.identity;
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => typeof m === 'string')) {
      throw bad("Invalid input for field 'identity/methods': 'methods' must be a non-empty list of strings");
    }
    if (methods.includes('application_credential')) {
      if (auth.scope !== undefined) throw unauthorized('Application credentials cannot request a scope.');
      return this.authenticateApplicationCredential(identity.application_credential);
    }
    if (!methods.includes('password')) throw unauthorized('Attempted to authenticate with an unsupported method.');
    const user = this.passwordUser(identity.password);
    if (isRecord(auth.scope) && auth.scope['OS-TRUST:trust'] !== undefined) return this.authenticateWithTrust(user, auth.scope['OS-TRUST:trust']);
    const project = this.scopeProject(auth.scope, user);
    const roles = this.rolesOn(user.id, project.id);
    if (roles.length === 0) throw unauthorized(`User ${user.id} has no access to project ${project.id}`);
    return this.issue(user.id, project.id, roles, ['password'], null);
  }

  /**
   * A trust-scoped token, with Keystone's answers: an unknown, deleted, expired or used-up trust
   * is 401 (not 404), another user than the trustee 403, a trustor who lost a delegated role 403.
   */
  private authenticateWithTrust(user: User, ref: unknown): TokenRecord {
    if (!isRecord(ref) || typeof ref.id !== 'string') throw bad("Invalid input for field 'scope/OS-TRUST:trust': 'id' is a required property");
    const trust = this.liveTrust(ref.id);
    if (!trust) throw unauthorized();
    if (trust.trusteeUserId !== user.id) throw new ApiError(403, 'You are not authorized to perform the requested action.');
    const roles = this.delegatedRoles(trust);
    if (!roles) throw new ApiError(403, 'Trustee has no delegated roles.');
    if (trust.remainingUses !== null) trust.remainingUses -= 1;
    const tokenTrust: TokenTrust = { id: trust.id, trustorUserId: trust.trustorUserId, trusteeUserId: trust.trusteeUserId, impersonation: trust.impersonation };
    const subject = trust.impersonation ? trust.trustorUserId : trust.trusteeUserId;
    return this.issue(subject, trust.projectId, roles, ['password'], null, tokenTrust);
  }

  /** The trust's roles with those they imply, or null when the trustor no longer has one of them. */
  private delegatedRoles(trust: Trust): string[] | null {
    const held = this.rolesOn(trust.trustorUserId, trust.projectId);
    const effective = withImpliedRoles(trust.roles);
    return effective.every((r) => held.includes(r)) ? effective : null;
  }

  /** A trust that can still be used: not deleted, not expired, uses left. */
  private liveTrust(id: string): Trust | undefined {
    const t = this.trusts.get(id);
    if (!t) return undefined;
    if (t.expiresAt !== null && t.expiresAt <= this.options.now()) return undefined;
    if (t.remainingUses !== null && t.remainingUses <= 0) return undefined;
    return t;
  }

  private passwordUser(password: unknown): User {
    if (!isRecord(password) || !isRecord(password.user)) {
      throw bad("Invalid input for field 'identity/password/user': 'user' is a required property");
    }
    const u = password.user;
    if (typeof u.password !== 'string') throw bad("Invalid input for field 'identity/password/user/password': 'password' must be a string");
    const user = this.findUser(u, 'identity/password/user');
    if (!user || user.password !== u.password) throw unauthorized();
    return user;
  }

  private findUser(u: Record<string, unknown>, field: string): User | undefined {
    if (typeof u.id === 'string') return this.userById(u.id);
    if (typeof u.name !== 'string') throw bad(`Invalid input for field '${field}': either 'id' or 'name' is required`);
    if (!isRecord(u.domain)) throw bad(`Expecting to find domain in user. The server could not comply with the request since it is either malformed or otherwise incorrect.`);
    if (!this.isDefaultDomain(u.domain)) return undefined;
    return this.users.find((x) => x.name === u.name);
  }

  private isDefaultDomain(domain: Record<string, unknown>): boolean {
    if (typeof domain.id === 'string') return domain.id === DEFAULT_DOMAIN.id;
    if (typeof domain.name === 'string') return domain.name === DEFAULT_DOMAIN.name;
    throw bad("Invalid input for field 'domain': either 'id' or 'name' is required");
  }

  private scopeProject(scope: unknown, user: User): Project {
    if (scope === undefined || scope === 'unscoped') {
      // Keystone scopes a token without `scope` to the user's default project.
      const p = this.projectById(user.defaultProjectId);
      if (!p) throw unauthorized();
      return p;
    }
    if (!isRecord(scope)) throw bad("Invalid input for field 'scope': must be an object");
    if (!isRecord(scope.project)) {
      throw unauthorized('The simulator issues project-scoped tokens only: give scope.project with an id, or a name and domain');
    }
    const p = scope.project;
    let project: Project | undefined;
    if (typeof p.id === 'string') project = this.projectById(p.id);
    else if (typeof p.name === 'string') {
      if (!isRecord(p.domain)) throw bad('Expecting to find domain in project. The server could not comply with the request since it is either malformed or otherwise incorrect.');
      project = this.isDefaultDomain(p.domain) ? this.projectByName(p.name) : undefined;
    } else throw bad("Invalid input for field 'scope/project': either 'id' or 'name' is required");
    if (!project) throw unauthorized(`Could not find project: ${String(p.id ?? p.name)}.`);
    return project;
  }

  private authenticateApplicationCredential(raw: unknown): TokenRecord {
    if (!isRecord(raw)) throw bad("Invalid input for field 'identity/application_credential': 'application_credential' is a required property");
    if (typeof raw.secret !== 'string') throw bad("Invalid input for field 'identity/application_credential/secret': 'secret' is a required property");
    let cred: ApplicationCredential | undefined;
    if (typeof raw.id === 'string') cred = this.appCredentials.get(raw.id);
    else if (typeof raw.name === 'string') {
      if (!isRecord(raw.user)) throw bad('Could not find the user: a name-based application credential needs user.id or user.name with user.domain');
      const user = this.findUser(raw.user, 'identity/application_credential/user');
      cred = [...this.appCredentials.values()].find((c) => c.name === raw.name && c.userId === user?.id);
    } else throw bad("Invalid input for field 'identity/application_credential': either 'id' or 'name' is required");
    if (!cred || cred.secret !== raw.secret) throw unauthorized('Invalid application credential: could not validate the secret.');
    if (cred.expiresAt !== null && cred.expiresAt <= this.options.now()) throw unauthorized('Application credential has expired.');
    const assigned = this.rolesOn(cred.userId, cred.projectId);
    const roles = cred.roles.filter((r) => assigned.includes(r));
    if (roles.length === 0) throw unauthorized(`User ${cred.userId} has no access to project ${cred.projectId}`);
    return this.issue(cred.userId, cred.projectId, roles, ['application_credential'], { id: cred.id, name: cred.name });
  }

  private issue(
    userId: string,
    projectId: string,
    roles: string[],
    methods: string[],
    applicationCredential: TokenRecord['applicationCredential'],
    trust: TokenTrust | null = null,
  ): TokenRecord {
    const now = this.options.now();
    // Fernet tokens start with gAAAAA and are about 180 characters long; clients may log or cap them.
    const id = 'gAAAAAB' + randomBytes(132).toString('base64url');
    const token: TokenRecord = {
      id,
      userId,
      projectId,
      roles,
      methods,
      issuedAt: now,
      expiresAt: now + this.tokenLifetimeMs,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      applicationCredential,
      trust,
    };
    this.tokens.set(id, token);
    return token;
  }

  /** The caller behind a token; null for an unknown, revoked or expired token. */
  resolve(tokenId: string | undefined): Caller | null {
    if (!tokenId) return null;
    const token = this.tokens.get(tokenId);
    if (!token || token.expiresAt <= this.options.now()) return null;
    if (this.deadTrustOf(token) !== null) return null;
    const user = this.userById(token.userId);
    const project = this.projectById(token.projectId);
    if (!user || !project) return null;
    // a trust token's roles are the trust's, so a member's trust never makes its trustee an admin
    return { token, user, project, isAdmin: token.roles.includes('admin') };
  }

  /**
   * The id of the trust a known, unexpired token was issued from when that trust is gone (deleted,
   * expired, or the trustor lost a delegated role): Keystone then answers its validation with
   * "Could not find trust". Null otherwise.
   */
  deadTrustOf(token: TokenRecord | string): string | null {
    const t = typeof token === 'string' ? this.tokens.get(token) : token;
    if (!t?.trust) return null;
    const trust = this.trusts.get(t.trust.id);
    // uses are counted when a token is issued; an issued token outlives the last use
    const alive = trust && (trust.expiresAt === null || trust.expiresAt > this.options.now()) && this.delegatedRoles(trust) !== null;
    return alive ? null : t.trust.id;
  }

  revoke(tokenId: string): boolean {
    return this.tokens.delete(tokenId);
  }

  /** Test hook: the token stays known but is past its expiry. */
  expire(tokenId: string): boolean {
    const t = this.tokens.get(tokenId);
    if (!t) return false;
    t.expiresAt = Math.min(t.expiresAt, this.options.now() - 1);
    return true;
  }

  /** Test hook: every token issued so far (a test greps logs and stored rows for them). */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  expireAll(): number {
    for (const id of this.tokens.keys()) this.expire(id);
    return this.tokens.size;
  }

  tokenBody(token: TokenRecord, catalog: unknown[]): Record<string, unknown> {
    const user = this.userById(token.userId)!;
    const project = this.projectById(token.projectId)!;
    const body: Record<string, unknown> = {
      methods: token.methods,
      user: { domain: { ...DEFAULT_DOMAIN }, id: user.id, name: user.name, password_expires_at: null },
      audit_ids: [token.auditId],
      expires_at: keystoneTime(token.expiresAt),
      issued_at: keystoneTime(token.issuedAt),
    };
    if (token.trust) {
      // as Keystone: the trust block, no is_domain, and the full role references
      body['OS-TRUST:trust'] = {
        id: token.trust.id,
        trustor_user: { id: token.trust.trustorUserId },
        trustee_user: { id: token.trust.trusteeUserId },
        impersonation: token.trust.impersonation,
      };
      body.project = { domain: { ...DEFAULT_DOMAIN }, id: project.id, name: project.name };
      body.roles = token.roles.map((name) => roleRef(name));
    } else {
      body.project = { domain: { ...DEFAULT_DOMAIN }, id: project.id, name: project.name };
      body.is_domain = false;
      body.roles = token.roles.map((name) => ({ id: stableId('role', name), name }));
    }
    body.catalog = catalog;
    if (token.applicationCredential) {
      body.application_credential = { ...token.applicationCredential, restricted: true };
    }
    return { token: body };
  }

  createApplicationCredential(caller: Caller, userId: string, body: unknown): ApplicationCredential {
    if (caller.user.id !== userId) {
      throw new ApiError(403, 'You are not authorized to perform the requested action: identity:create_application_credential.');
    }
    if (caller.token.applicationCredential) {
      throw new ApiError(403, 'Using method \'application_credential\' is not allowed for managing additional application credentials.');
    }
    if (!isRecord(body) || !isRecord(body.application_credential)) {
      throw bad("Invalid input for field 'application_credential': 'application_credential' is a required property");
    }
    const req = body.application_credential;
    if (typeof req.name !== 'string' || req.name.trim() === '' || req.name.length > 255) {
      throw bad("Invalid input for field 'name': must be a string of 1-255 characters");
    }
    const name = req.name;
    if ([...this.appCredentials.values()].some((c) => c.userId === userId && c.name === name)) {
      throw new ApiError(409, `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${name}.`);
    }
    if (req.secret !== undefined && (typeof req.secret !== 'string' || req.secret === '')) {
      throw bad("Invalid input for field 'secret': must be a non-empty string");
    }
    if (req.description !== undefined && req.description !== null && typeof req.description !== 'string') {
      throw bad("Invalid input for field 'description': must be a string");
    }
    let expiresAt: number | null = null;
    if (req.expires_at !== undefined && req.expires_at !== null) {
      const t = typeof req.expires_at === 'string' ? Date.parse(req.expires_at) : NaN;
      if (Number.isNaN(t)) throw bad("Invalid input for field 'expires_at': must be an ISO 8601 date-time");
      expiresAt = t;
    }
    let roles = caller.token.roles;
    if (req.roles !== undefined) {
      if (!Array.isArray(req.roles)) throw bad("Invalid input for field 'roles': must be a list of {id} or {name}");
      roles = req.roles.map((r, i) => {
        const role = isRecord(r) ? this.roles.find((x) => x.id === r.id || x.name === r.name) : undefined;
        if (!role) throw new ApiError(404, `Could not find role: ${JSON.stringify(r)} (roles[${i}]).`);
        if (!caller.token.roles.includes(role.name)) {
          throw new ApiError(403, `Cannot create an application credential with unassigned role ${role.name}.`);
        }
        return role.name;
      });
    }
    const cred: ApplicationCredential = {
      id: randomUUID().replace(/-/g, ''),
      name,
      description: typeof req.description === 'string' ? req.description : null,
      secret: typeof req.secret === 'string' ? req.secret : randomBytes(48).toString('base64url'),
      userId,
      projectId: caller.project.id,
      roles,
      expiresAt,
    };
    this.appCredentials.set(cred.id, cred);
    return cred;
  }

  applicationCredentialsOf(userId: string): ApplicationCredential[] {
    return [...this.appCredentials.values()].filter((c) => c.userId === userId);
  }

  deleteApplicationCredential(userId: string, id: string): boolean {
    const c = this.appCredentials.get(id);
    if (!c || c.userId !== userId) return false;
    this.appCredentials.delete(id);
    return true;
  }

  applicationCredentialView(c: ApplicationCredential, withSecret: boolean, baseUrl: string): Record<string, unknown> {
    const view: Record<string, unknown> = {
      id: c.id,
      name: c.name,
      description: c.description,
      user_id: c.userId,
      project_id: c.projectId,
      roles: c.roles.map((name) => ({ id: stableId('role', name), name, domain_id: null })),
      expires_at: c.expiresAt === null ? null : keystoneTime(c.expiresAt),
      unrestricted: false,
      access_rules: [],
      links: { self: `${baseUrl}/users/${c.userId}/application_credentials/${c.id}` },
    };
    if (withSecret) view.secret = c.secret;
    return view;
  }

  /** `POST /v3/OS-TRUST/trusts`, checked in Keystone's order with Keystone's messages. */
  createTrust(caller: Caller, body: unknown): Trust {
    const req = isRecord(body) && isRecord(body.trust) ? body.trust : null;
    // the policy (user_id:%(trust.trustor_user_id)s) runs before the body is validated
    if (!req || req.trustor_user_id !== caller.user.id) throw forbidden('identity:create_trust');
    if (typeof req.trustee_user_id !== 'string') throw bad("Invalid input for field 'trustee_user_id': 'trustee_user_id' is a required property");
    if (typeof req.impersonation !== 'boolean') throw bad("Invalid input for field 'impersonation': 'impersonation' is a required property");
    if (typeof req.project_id !== 'string') throw bad("Invalid input for field 'project_id': the simulator delegates project roles only");
    if (caller.token.applicationCredential) {
      throw new ApiError(403, "Using method 'application_credential' is not allowed for managing trusts.");
    }
    if (!Array.isArray(req.roles) || req.roles.length === 0) {
      throw bad('Expecting to find roles in trust. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.');
    }
    if (!this.userById(req.trustee_user_id)) throw new ApiError(404, `Could not find user: ${req.trustee_user_id}.`);
    const roles = req.roles.map((r) => {
      const role = isRecord(r) && typeof r.id === 'string' ? this.roles.find((x) => x.id === r.id) : isRecord(r) && typeof r.name === 'string' ? this.roles.find((x) => x.name === r.name) : undefined;
      if (!role) {
        if (isRecord(r) && typeof r.id === 'string') throw new ApiError(404, `Could not find role: ${r.id}.`);
        if (isRecord(r) && typeof r.name === 'string') throw new ApiError(404, `Role ${r.name} is not defined`);
        throw bad("Invalid input for field 'roles': each role needs an id or a name");
      }
      return role;
    });
    // Keystone checks the trustor's roles on the trust's project, not the token's scope
    const held = this.rolesOn(caller.user.id, req.project_id);
    const missing = roles.find((r) => !held.includes(r.name));
    if (missing) throw new ApiError(404, `Could not find role: ${missing.id}.`);
    let expiresAt: number | null = null;
    if (req.expires_at !== undefined && req.expires_at !== null) {
      expiresAt = typeof req.expires_at === 'string' ? Date.parse(req.expires_at) : NaN;
      if (Number.isNaN(expiresAt)) throw bad("Invalid input for field 'expires_at': must be an ISO 8601 date-time");
      if (expiresAt < this.options.now()) {
        throw bad("The 'expires_at' must not be before now. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.");
      }
    }
    let remainingUses: number | null = null;
    if (req.remaining_uses !== undefined && req.remaining_uses !== null) {
      if (typeof req.remaining_uses !== 'number' || !Number.isInteger(req.remaining_uses) || req.remaining_uses < 1) {
        throw bad("Invalid input for field 'remaining_uses': must be a positive whole number or null");
      }
      remainingUses = req.remaining_uses;
    }
    const trust: Trust = {
      id: randomUUID().replace(/-/g, ''),
      trustorUserId: caller.user.id,
      trusteeUserId: req.trustee_user_id,
      projectId: req.project_id,
      impersonation: req.impersonation,
      roles: [...new Set(roles.map((r) => r.name))],
      expiresAt,
      remainingUses,
    };
    this.trusts.set(trust.id, trust);
    return trust;
  }

  /** `GET /v3/OS-TRUST/trusts/{id}`: the trustor, the trustee or an admin; 404 first. */
  readTrust(caller: Caller, id: string): Trust {
    const trust = this.liveTrust(id);
    if (!trust) throw trustNotFound(id);
    if (!caller.isAdmin && caller.user.id !== trust.trustorUserId && caller.user.id !== trust.trusteeUserId) throw forbidden('identity:get_trust');
    return trust;
  }

  /** `GET /v3/OS-TRUST/trusts`: without a filter for admins only; a filter must name the caller. */
  listTrusts(caller: Caller, trustorUserId: string | null, trusteeUserId: string | null): Trust[] {
    if (!caller.isAdmin) {
      if (trustorUserId === null && trusteeUserId === null) throw forbidden('identity:list_trusts');
      if (trustorUserId !== null && trustorUserId !== caller.user.id) throw forbidden('identity:list_trusts_for_trustor');
      if (trusteeUserId !== null && trusteeUserId !== caller.user.id) throw forbidden('identity:list_trusts_for_trustee');
    }
    return [...this.trusts.keys()]
      .map((id) => this.liveTrust(id))
      .filter((t): t is Trust => !!t)
      .filter((t) => (trustorUserId === null || t.trustorUserId === trustorUserId) && (trusteeUserId === null || t.trusteeUserId === trusteeUserId));
  }

  /**
   * `DELETE /v3/OS-TRUST/trusts/{id}`: the trustor or an admin. The tokens issued from the trust
   * stop working at once (real Nova may accept one for up to keystonemiddleware's cache time).
   */
  deleteTrust(caller: Caller, id: string): void {
    const trust = this.liveTrust(id);
    if (!trust) throw trustNotFound(id);
    if (!caller.isAdmin && caller.user.id !== trust.trustorUserId) throw forbidden('identity:delete_trust');
    this.trusts.delete(id);
  }

  trustView(t: Trust, baseUrl: string, withRoles: boolean): Record<string, unknown> {
    const view: Record<string, unknown> = {};
    if (withRoles) view.roles = t.roles.map((name) => ({ ...roleRef(name), links: { self: `${baseUrl}/roles/${stableId('role', name)}` } }));
    Object.assign(view, {
      id: t.id,
      trustor_user_id: t.trustorUserId,
      trustee_user_id: t.trusteeUserId,
      project_id: t.projectId,
      impersonation: t.impersonation,
      expires_at: t.expiresAt === null ? null : keystoneTime(t.expiresAt),
      remaining_uses: t.remainingUses,
      deleted_at: null,
      redelegated_trust_id: null,
      redelegation_count: 0,
    });
    // Keystone's roles_links really leave out OS-TRUST/trusts
    if (withRoles) view.roles_links = { self: `${baseUrl}/${t.id}/roles`, next: null, previous: null };
    view.links = { self: `${baseUrl}/OS-TRUST/trusts/${t.id}` };
    return view;
  }

  /** `POST /_sim/reset`: tokens survive so a test's client keeps working; credentials and trusts go. */
  reset(): void {
    this.appCredentials.clear();
    this.trusts.clear();
  }

  /** What Keystone would keep in its database: tokens, trusts and application credentials (the state file). */
  exportState(): PersistedIdentity {
    // expired tokens are of no use to anyone after a restart
    const now = this.options.now();
    return { tokens: [...this.tokens.values()].filter((t) => t.expiresAt > now), trusts: [...this.trusts.values()], application_credentials: [...this.appCredentials.values()] };
  }

  /** Replaces tokens, trusts and application credentials with what `exportState()` gave. */
  importState(saved: PersistedIdentity): void {
    this.tokens.clear();
    this.trusts.clear();
    this.appCredentials.clear();
    for (const t of saved.tokens) this.tokens.set(t.id, t);
    for (const t of saved.trusts) this.trusts.set(t.id, t);
    for (const c of saved.application_credentials) this.appCredentials.set(c.id, c);
  }
}

export interface PersistedIdentity {
  tokens: TokenRecord[];
  trusts: Trust[];
  application_credentials: ApplicationCredential[];
}
