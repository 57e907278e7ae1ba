import type { OpenStackSettings } from '@trellis/common';
import { pathOf, type HttpResponse, type Runtime } from './http-transport';
import type { KeystoneSession } from './keystone-session';
import { createSession, type KeystoneClientOptions } from './session';
import { NovaResponseError } from './openstack.errors';

/** A Keystone trust as Trellis keeps it: who lent which roles on which project to whom. */
export interface TrustRecord {
  id: string;
  trustorUserId: string;
  trusteeUserId: string;
  projectId: string;
  /** role names as delegated (the roles they imply come with them in a trust-scoped token) */
  roles: string[];
  impersonation: boolean;
  /** Keystone's timestamp, or null for a trust that does not expire */
  expiresAt: string | null;
}

/**
 * Keystone's OS-TRUST API for Trellis's service user, the trustee of every trust: a user lends it
 * roles on a project (with the user's own token), and it reads them back with its own.
 */
export class KeystoneTrusts {
  constructor(
    private readonly session: KeystoneSession,
    private readonly runtime: Runtime,
  ) {}

  /** The service user's own id (the trustee), from its token. */
  async serviceUserId(): Promise<string> {
    const token = await this.session.token();
    if (!token.userId) {
      const path = pathOf(`${this.session.credentials.authUrl}/auth/tokens`);
      throw new NovaResponseError({ service: 'identity', status: 201, method: 'POST', path, serviceMessage: 'token.user.id is missing', problem: 'token.user.id is missing' });
    }
    return token.userId;
  }

  /**
   * A trust from the trustor (whose token this is) to the service user on that project, with those
   * roles, impersonating: the service then acts in Nova as the trustor. Keystone allows only the
   * trustor itself to create it, and only with roles it holds on the project.
   */
  async create(userToken: string, input: { trustorUserId: string; projectId: string; roles: string[] }): Promise<TrustRecord> {
    if (input.roles.length === 0) throw new RangeError('a trust needs at least one role');
    const trustee = await this.serviceUserId();
    const url = this.url();
    const response = await this.session.transport.send({
      service: 'identity',
      operation: 'trusts.create',
      method: 'POST',
      url,
      headers: { 'X-Auth-Token': userToken },
      body: {
        trust: {
          trustor_user_id: input.trustorUserId,
          trustee_user_id: trustee,
          project_id: input.projectId,
          impersonation: true,
          roles: input.roles.map((name) => ({ name })),
        },
      },
      // a repeated create could leave a second trust behind
      idempotent: false,
    });
    const trust = this.read(response, 'POST', url);
    this.runtime.logger.debug?.(`Keystone trust ${trust.id}: ${trust.trustorUserId} lends ${trust.roles.join(', ')} on ${trust.projectId} to ${trust.trusteeUserId}`);
    return trust;
  }

  /** The trust as the trustee sees it; null when Keystone does not know it (deleted, expired, never made). */
  async get(trustId: string): Promise<TrustRecord | null> {
    const url = this.url(trustId);
    const response = await this.session.request({ service: 'identity', operation: 'trusts.get', method: 'GET', url, idempotent: true, accept: [404] });
    return response.status === 404 ? null : this.read(response, 'GET', url);
  }

  /** Deletes the trust with the trustor's token; a trust already gone counts as deleted. */
  async delete(userToken: string, trustId: string): Promise<void> {
    await this.session.transport.send({
      service: 'identity',
      operation: 'trusts.delete',
      method: 'DELETE',
      url: this.url(trustId),
      headers: { 'X-Auth-Token': userToken },
      idempotent: true,
      accept: [404],
    });
  }

  private url(trustId?: string): string {
    const base = `${this.session.credentials.authUrl}/OS-TRUST/trusts`;
    return trustId === undefined ? base : `${base}/${encodeURIComponent(trustId)}`;
  }

  private read(response: HttpResponse, method: string, url: string): TrustRecord {
    const fail = (problem: string) => new NovaResponseError({ service: 'identity', status: response.status, method, path: pathOf(url), serviceMessage: problem, problem });
    const body = response.body as { trust?: Record<string, unknown> } | null;
    const t = body?.trust;
    if (!t || typeof t !== 'object') throw fail('no trust object');
    const text = (key: string): string => {
      const v = t[key];
      if (typeof v !== 'string' || v === '') throw fail(`trust.${key} is not a string`);
      return v;
    };
    if (typeof t.impersonation !== 'boolean') throw fail('trust.impersonation is not a boolean');
    if (!Array.isArray(t.roles)) throw fail('trust.roles is not a list');
    const roles = t.roles.map((r, i) => {
      const name = r && typeof r === 'object' ? (r as Record<string, unknown>).name : undefined;
      if (typeof name !== 'string') throw fail(`trust.roles[${i}].name is not a string`);
      return name;
    });
    if (t.expires_at !== null && t.expires_at !== undefined && typeof t.expires_at !== 'string') throw fail('trust.expires_at is not a time');
    return {
      id: text('id'),
      trustorUserId: text('trustor_user_id'),
      trusteeUserId: text('trustee_user_id'),
      projectId: text('project_id'),
      roles,
      impersonation: t.impersonation,
      expiresAt: typeof t.expires_at === 'string' ? t.expires_at : null,
    };
  }
}

/** KeystoneTrusts for the service user of these settings. Throws ConfigError naming a missing or bad setting. */
export function createKeystoneTrusts(settings: OpenStackSettings, options: KeystoneClientOptions = {}): KeystoneTrusts {
  const { session, resolved } = createSession(settings, options);
  return new KeystoneTrusts(session, resolved.runtime);
}
