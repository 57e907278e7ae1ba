import type { AuthContext } from '@trellis/common';

/*
 * The identity port: who a caller is (token validation) and what a user lends Trellis to act for
 * them (trusts). The gateway and the nova-worker depend on these; libs/identity's Keystone v3
 * client implements them, and the tests fake them.
 */

/** Validates a caller's token (Keystone v3 `GET /v3/auth/tokens`); null when it is not valid. */
export interface TokenValidator {
  validate(token: string): Promise<AuthContext | null>;
}

export const TOKEN_VALIDATOR = Symbol('TOKEN_VALIDATOR');

/**
 * Keystone's OS-TRUST as Trellis uses it (Senlin's trust middleware): a user delegates roles in a
 * project to Trellis's service user, and the nova-worker acts in that project with a token scoped
 * to the trust.
 */
export interface TrustIssuer {
  /** Trellis's own user id: the trustee of every trust */
  serviceUserId(): Promise<string>;
  /** made with the trustor's own token: trustor → service user, for that project and those role names, impersonating */
  create(userToken: string, input: { trustorUserId: string; projectId: string; roles: string[] }): Promise<{ id: string }>;
  /** read with the service identity (the trustee); null when Keystone no longer has it */
  get(trustId: string): Promise<{ id: string } | null>;
}

export const TRUST_ISSUER = Symbol('TRUST_ISSUER');

/**
 * A trust could not be used: none was ever made for that user and project, or Keystone refuses it
 * (revoked, expired, deleted, roles lost). Permanent: the action fails at once with this reason,
 * it is never retried.
 */
export class TrustUnusableError extends Error {
  readonly permanent = true;
  constructor(
    message: string,
    readonly userId: string,
    readonly projectId: string,
    readonly trustId: string | null,
  ) {
    super(message);
    this.name = 'TrustUnusableError';
  }
}

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
