/** Who is calling: the validated Keystone token of an HTTP or RPC caller. */
export interface AuthContext {
  token: string;
  userId: string;
  userName: string;
  /**
   * The project the request works in. A system-scoped token has none: '' here, so it finds no
   * project's objects and, by the default rules, creates none (docs/SECURITY.md).
   */
  projectId: string;
  projectName: string;
  domainId: string | null;
  roles: string[];
  /**
   * a cloud admin: the `admin` role in the admin project (TRELLIS_ADMIN_PROJECT) or on a
   * system-scoped token. The `admin` role in any other project is only isProjectAdmin.
   */
  isAdmin: boolean;
  /**
   * has the `admin` role in the token's own project (an administrator of that project, not of the
   * cloud): sees the hypervisor and host names in its project's decisions, nodes and findings
   */
  isProjectAdmin: boolean;
  /** `all` for a system-scoped token (Keystone's `system: {all: true}`), else null */
  systemScope: string | null;
  /** the token's project is the admin project (TRELLIS_ADMIN_PROJECT, by name or id) */
  isAdminProject: boolean;
  expiresAt: Date;
}

/** Validates a caller's token (Keystone v3 `GET /v3/auth/tokens`); null when it is not valid. */
export interface TokenValidator {
  validate(token: string): Promise<AuthContext | null>;
}

export const TOKEN_VALIDATOR = Symbol('TOKEN_VALIDATOR');

/** What a person types to sign in with a password (the web page at /ui). */
export interface PasswordSignInRequest {
  username: string;
  password: string;
  /** the project to scope the token to, by name */
  project: string;
  /** the domain of both the user and the project, by name (`Default`) */
  domain: string;
}

/**
 * Keystone's password authentication on behalf of a person (the web page's sign-in form): the
 * project-scoped token Keystone issued, or null when Keystone refused the credentials.
 */
export interface PasswordSignIn {
  signIn(request: PasswordSignInRequest): Promise<{ token: string; expiresAt: Date } | null>;
}
