import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError, isRecord, keystoneTime } from './http-kit';

/**
 * The Keystone side of the simulator: three projects, three users, their role assignments,
 * tokens and application credentials. Ids are stable hashes so they survive restarts.
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

const ROLE_NAMES = ['admin', 'member', 'reader'] as const;

function bad(message: string): ApiError {
  return new ApiError(400, message);
}

function unauthorized(message = UNAUTHENTICATED): ApiError {
  return new ApiError(401, message);
}

export interface IdentityOptions {
  adminPassword: string;
  demoPassword: string;
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

  constructor(private readonly options: IdentityOptions) {
    this.tokenLifetimeMs = options.tokenLifetimeMs;
    const project = (name: string): Project => ({ id: stableId('project', name), name });
    this.projects = [project('admin'), project('demo'), project('alt_demo')];
    const [admin, demo, altDemo] = this.projects;
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
    ];
    // As the reference cloud: admin is admin on its project and on demo; `member` implies `reader`.
    this.assign('admin', 'admin', ['admin', 'member', 'reader']);
    this.assign('admin', 'demo', ['admin', 'member', 'reader']);
    this.assign('demo', 'demo', ['member', 'reader']);
    this.assign('alt_demo', 'alt_demo', ['member', 'reader']);
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
    const project = this.scopeProject(auth.scope, user);
    const roles = this.rolesOn(user.id, project.id);
    if (roles.length === 0) throw unauthorized(`User ${user.id} has no access to project ${project.id}`);
    return this.issue(user.id, project.id, roles, ['password'], null);
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
    };
    this.tokens.set(id, token);
    return token;
  }

  /** The caller behind a token; null for an unknown, revoked or expired token. */
  resolve(tokenId: string | undefined): Caller | null {
    if (!tokenId) return null;
    const token = this.tokens.get(tokenId);
    if (!token || token.expiresAt <= this.options.now()) return null;
    const user = this.userById(token.userId);
    const project = this.projectById(token.projectId);
    if (!user || !project) return null;
    return { token, user, project, isAdmin: token.roles.includes('admin') };
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
      project: { domain: { ...DEFAULT_DOMAIN }, id: project.id, name: project.name },
      is_domain: false,
      roles: token.roles.map((name) => ({ id: stableId('role', name), name })),
      catalog,
    };
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

  /** `POST /_sim/reset`: tokens survive so a test's client keeps working; credentials go. */
  reset(): void {
    this.appCredentials.clear();
  }
}
