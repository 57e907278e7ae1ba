import { ConfigError, DomainError, RecentMap, type OpenStackSettings } from '@trellis/common';
import { HttpTransport, KeystoneSession, resolveCredentials, type PasswordCredentials } from '@trellis/identity';
import { NovaHttpClient, resolveOptions, type NovaClientOptions, type ResolvedOptions } from './nova-http.client';
import type { NovaError } from './nova.errors';
import type { NovaPort } from './nova.port';

const CODES: Record<number, 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND'> = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

/**
 * Keystone refused a trust-scoped token (401, 403 or 404): the trust was deleted, expired or used
 * up, the trustor lost a delegated role, or the service user is not its trustee. Asking again
 * cannot help, so the caller fails the action at once.
 */
export class TrustError extends DomainError {
  readonly permanent = true;

  constructor(
    readonly trustId: string,
    readonly status: number,
    /** Keystone's own message */
    readonly keystoneMessage: string,
  ) {
    super(
      CODES[status] ?? 'FORBIDDEN',
      `Keystone refused a token for trust ${trustId} (${status}: ${keystoneMessage}); the trust was deleted, expired or used up, its trustor lost a delegated role, it was not made for this service user, or the service user's password is wrong`,
      'Forbidden',
      false,
    );
    this.name = 'TrustError';
  }
}

export interface TrustedNovaPoolOptions extends NovaClientOptions {
  /** clients (each with its Keystone session) kept at most; the least recently used goes first. Default 256 */
  maxClients?: number;
}

/**
 * Nova clients that act for the users who asked: each authenticates as the service user scoped to
 * one trust (`{"scope": {"OS-TRUST:trust": {"id"}}}`), so Nova sees the trustor in the trust's
 * project with the delegated roles, never the service's own identity.
 */
export class TrustedNovaPool {
  private readonly credentials: PasswordCredentials;
  private readonly resolved: ResolvedOptions;
  private readonly transport: HttpTransport;
  private readonly clients: RecentMap<string, NovaHttpClient>;

  constructor(settings: OpenStackSettings, options: TrustedNovaPoolOptions = {}) {
    const credentials = resolveCredentials(settings, options);
    if (credentials.method !== 'password') {
      throw new ConfigError(
        settings.applicationCredentialId ? 'OS_APPLICATION_CREDENTIAL_ID' : 'OS_AUTH_TYPE',
        `gives the service user an application credential, but Keystone does not let an application credential use a trust: the trustee needs password auth (OS_USERNAME/OS_PASSWORD)`,
      );
    }
    const maxClients = options.maxClients ?? 256;
    if (!Number.isInteger(maxClients) || maxClients < 1) throw new RangeError(`maxClients must be a whole number >= 1, got ${options.maxClients}`);
    this.credentials = credentials;
    this.clients = new RecentMap(maxClients);
    this.resolved = resolveOptions(options);
    this.transport = new HttpTransport(this.resolved.runtime, this.resolved.retry, this.resolved.timeoutMs);
  }

  /** The Nova client acting through this trust (made on first use, then kept while used). */
  forTrust(trustId: string): NovaPort {
    if (trustId === '') throw new RangeError('a trust id is required');
    const known = this.clients.get(trustId);
    if (known) return known;
    const session = new KeystoneSession({ ...this.credentials, trustId }, this.transport, this.resolved.runtime, {
      renewMarginMs: this.resolved.renewMarginMs,
      refused: (e: NovaError) => new TrustError(trustId, e.status ?? 0, e.serviceMessage),
    });
    const client = new NovaHttpClient(session, this.resolved);
    this.clients.set(trustId, client);
    return client;
  }

  /** Forgets a trust's client (after the trust was found revoked). */
  evict(trustId: string): void {
    this.clients.delete(trustId);
  }

  /** how many clients are kept (for tests and metrics) */
  get size(): number {
    return this.clients.size;
  }
}
