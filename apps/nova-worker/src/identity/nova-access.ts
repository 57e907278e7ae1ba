import { createHash } from 'node:crypto';
import { RecentMap, errorMessage, type Logger } from '@trellis/common';
import { TrustUnusableError } from '@trellis/identity';
import type { NovaPort } from '@trellis/nova';
import type { DataSource } from 'typeorm';

/** Whose authority a Nova call is made with: the user who started the action, in its project. */
export interface Owner {
  project: string;
  user: string;
}

/** Trust-scoped Nova clients (libs/nova's TrustedNovaPool). */
export interface TrustedClients {
  forTrust(trustId: string): NovaPort;
  evict(trustId: string): void;
}

/** Keystone's view of a trust, read with the service identity (libs/nova KeystoneTrusts.get). */
export interface TrustLookup {
  get(trustId: string): Promise<{ id: string } | null>;
}

export interface NovaAccessOptions {
  /** how long an owner's trust id is reused without reading the database again (default 30 s) */
  lookupCacheMs?: number;
  now?: () => number;
}

/**
 * The nova-worker's two faces towards Nova (docs/SECURITY.md):
 * - `asOwner`: Nova as the project that asked, with a token scoped to the Keystone trust its user
 *   gave Trellis. Every call that reads, creates, changes or deletes a project's servers and server
 *   groups goes through it, so Nova's own rules and quotas apply to the user.
 * - `cloud`: Trellis's own service identity, for the cloud-wide facts no project may read
 *   (hypervisors, the host-to-zone map). It never touches a project's servers or groups.
 *
 * A trust that is missing, or that Keystone refuses (revoked, expired, deleted), is a
 * TrustUnusableError naming the user and project: permanent, never retried. A refused trust's row
 * is dropped, so the user's next action makes a new one.
 */
export class NovaAccess {
  /** user/project → the trust id read, and when */
  private readonly trustIds = new RecentMap<string, { trustId: string; at: number }>(10_000);
  private readonly lookupCacheMs: number;
  private readonly now: () => number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly clients: TrustedClients,
    /** the service identity: cloud-wide reads only */
    readonly cloud: NovaPort,
    private readonly logger: Logger,
    /** null: trusts are not checked with Keystone before an order (tests) */
    private readonly keystone: TrustLookup | null,
    options: NovaAccessOptions = {},
  ) {
    this.lookupCacheMs = options.lookupCacheMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Nova as the owner. `verify` asks Keystone whether the trust still exists before the client is
   * handed out: a token scoped to a trust that was just deleted may still pass Nova for a while
   * (keystonemiddleware caches token checks for up to 5 minutes, seen on the real cloud), so a work
   * order that changes the project is started only on a trust Keystone has now.
   */
  async asOwner(owner: Owner, options: { verify?: boolean } = {}): Promise<NovaPort> {
    const trustId = await this.trustOf(owner);
    if (options.verify && this.keystone) await this.verify(owner, trustId);
    return this.guarded(this.clients.forTrust(trustId), owner, trustId);
  }

  /**
   * Asked anew for every order, never cached: on the real cloud a scale-out ends in about a second,
   * and a trust revoked right after it must fail the next order (a 2 s cache let it through).
   */
  private async verify(owner: Owner, trustId: string): Promise<void> {
    let found: { id: string } | null;
    try {
      found = await this.keystone!.get(trustId);
    } catch (e) {
      const status = (e as { status?: number }).status;
      // 401/403/404 on reading the trust: Keystone will not let it be used either
      if (status !== 401 && status !== 403 && status !== 404) throw e;
      found = null;
    }
    if (!found) {
      await this.forget(owner, trustId);
      throw new TrustUnusableError(
        `The Keystone trust ${trustId} from user ${owner.user} to Trellis in project ${owner.project} can no longer be used ` +
          `(Keystone no longer has it: revoked, expired or deleted). The user's next request that starts an action makes a new trust.`,
        owner.user,
        owner.project,
        trustId,
      );
    }
  }

  private async trustOf(owner: Owner): Promise<string> {
    const key = `${owner.user}/${owner.project}`;
    const hit = this.trustIds.get(key);
    if (hit && this.now() - hit.at < this.lookupCacheMs) return hit.trustId;
    const rows: Array<{ trust_id: string }> = await this.dataSource.query('SELECT trust_id FROM trusts WHERE user_id = $1 AND project_id = $2', [
      owner.user,
      owner.project,
    ]);
    if (!rows.length) {
      this.trustIds.delete(key);
      throw new TrustUnusableError(
        `No Keystone trust from user ${owner.user} to Trellis in project ${owner.project}: Trellis acts in Nova only with the ` +
          `authority a user delegated (the user's next request that starts an action makes the trust).`,
        owner.user,
        owner.project,
        null,
      );
    }
    this.trustIds.set(key, { trustId: rows[0].trust_id, at: this.now() });
    return rows[0].trust_id;
  }

  /** The client, with Keystone's refusal of the trust turned into a TrustUnusableError for this owner. */
  private guarded(nova: NovaPort, owner: Owner, trustId: string): NovaPort {
    return new Proxy(nova, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } catch (e) {
            if (!isTrustRefusal(e)) throw e;
            await this.forget(owner, trustId);
            throw new TrustUnusableError(
              `The Keystone trust ${trustId} from user ${owner.user} to Trellis in project ${owner.project} can no longer be used ` +
                `(revoked, expired or deleted; Keystone: ${errorMessage(e)}). The user's next request that starts an action makes a new trust.`,
              owner.user,
              owner.project,
              trustId,
            );
          }
        };
      },
    });
  }

  private async forget(owner: Owner, trustId: string): Promise<void> {
    this.trustIds.delete(`${owner.user}/${owner.project}`);
    this.clients.evict(trustId);
    try {
      await this.dataSource.query('DELETE FROM trusts WHERE trust_id = $1', [trustId]);
    } catch (e) {
      this.logger.warn('could not drop a refused trust', { trust_id: trustId, error: errorMessage(e) });
    }
    this.logger.warn('Keystone refused a trust; its row was dropped', { trust_id: trustId, user_id: owner.user, project_id: owner.project });
  }
}

/** libs/nova's TrustError: Keystone refused a trust-scoped authentication (401/403/404). */
export function isTrustRefusal(e: unknown): boolean {
  return !!e && typeof e === 'object' && (e as Error).name === 'TrustError';
}

/** An error that no retry can fix: a refused or missing trust, or one marked so by its source. */
export function isPermanent(e: unknown): boolean {
  return e instanceof TrustUnusableError || isTrustRefusal(e) || (!!e && typeof e === 'object' && (e as { permanent?: unknown }).permanent === true);
}

/** Nova's hostId: what a non-admin sees of a host, a per-project hash (nova.utils.generate_hostid). */
export function hostIdOf(projectId: string, host: string): string {
  return createHash('sha224').update(projectId + host).digest('hex');
}
