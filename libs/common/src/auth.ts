/** Who is calling: the validated Keystone token of an HTTP or RPC caller. */
export interface AuthContext {
  token: string;
  userId: string;
  userName: string;
  projectId: string;
  projectName: string;
  domainId: string | null;
  roles: string[];
  /** has the `admin` role */
  isAdmin: boolean;
  /**
   * an admin of the project the token is scoped to (`admin` among the token's roles): sees the
   * hypervisor and host names in its project's decisions, nodes and findings
   */
  isProjectAdmin: boolean;
  expiresAt: Date;
}

/** Validates a caller's token (Keystone v3 `GET /v3/auth/tokens`); null when it is not valid. */
export interface TokenValidator {
  validate(token: string): Promise<AuthContext | null>;
}

export const TOKEN_VALIDATOR = Symbol('TOKEN_VALIDATOR');
