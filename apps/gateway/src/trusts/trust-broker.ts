import { DomainError, RecentMap, errorMessage, unavailable, type AuthContext, type Logger } from '@trellis/common';
import type { TrustIssuer } from '@trellis/identity';
import type { EntityManager } from 'typeorm';
import { hotQuery } from '../infra/persistence.adapter';

export interface TrustBrokerOptions {
  /** how long a trust seen in Keystone is trusted without asking again (default 5 min) */
  verifyEverySeconds?: number;
  /** (user, project) pairs remembered in memory (default 10,000) */
  cacheSize?: number;
  now?: () => number;
}

interface Known {
  trustId: string;
  verifiedAt: number;
}

/** Whether the trust `ensure` would reuse was stored, as another statement of the caller's transaction read it (`storedCheck`). */
export interface SeenTrust {
  trustId: string;
  stored: boolean;
}

/** `storedCheck`'s column (`trust_stored`), its parameters, and the trust it reads. */
export interface TrustCheck {
  select: string;
  params: unknown[];
  trustId: string;
}

/**
 * Makes sure the caller has delegated to Trellis before an action of theirs reaches Nova (Senlin's
 * trust middleware, done once per user and project instead of on every request): the stored trust
 * is reused while Keystone still has it; otherwise a new one is made with the caller's own token,
 * for the caller's project and roles, and its id (never a token) is stored by user and project.
 */
export class TrustBroker {
  private readonly known: RecentMap<string, Known>;
  private readonly verifyEveryMs: number;
  private readonly now: () => number;

  constructor(
    private readonly keystone: TrustIssuer,
    private readonly logger: Logger,
    options: TrustBrokerOptions = {},
  ) {
    this.verifyEveryMs = (options.verifyEverySeconds ?? 300) * 1000;
    this.known = new RecentMap(options.cacheSize ?? 10_000);
    this.now = options.now ?? Date.now;
  }

  /**
   * The read `ensure` starts with when it remembers the caller's trust, as a column (`trust_stored`)
   * another statement of the same transaction can carry, with parameters from `$first`; null when
   * it remembers none. Pass what that statement read to `ensure` as `seen`.
   */
  storedCheck(caller: AuthContext, first: number): TrustCheck | null {
    const cached = this.known.get(`${caller.userId}/${caller.projectId}`);
    if (!cached || this.now() - cached.verifiedAt >= this.verifyEveryMs) return null;
    return {
      select: `EXISTS (SELECT 1 FROM trusts WHERE user_id = $${first} AND project_id = $${first + 1} AND trust_id = $${first + 2}) AS trust_stored`,
      params: [caller.userId, caller.projectId, cached.trustId],
      trustId: cached.trustId,
    };
  }

  /**
   * The trust id the caller's actions in their project will use; made on first need. `seen`: the
   * remembered trust is stored, as `storedCheck`'s column read in this transaction (no read of its own).
   */
  async ensure(m: EntityManager, caller: AuthContext, seen?: SeenTrust): Promise<string> {
    const key = `${caller.userId}/${caller.projectId}`;
    const now = this.now();
    const cached = this.known.get(key);
    if (cached && now - cached.verifiedAt < this.verifyEveryMs) {
      if (seen?.stored && seen.trustId === cached.trustId) return cached.trustId;
      // the worker deletes the row of a trust Keystone refused: one cheap read keeps that visible
      const rows: unknown[] = await hotQuery(m, 'SELECT 1 FROM trusts WHERE user_id = $1 AND project_id = $2 AND trust_id = $3', [
        caller.userId,
        caller.projectId,
        cached.trustId,
      ]);
      if (rows.length) return cached.trustId;
    }
    this.known.delete(key);

    const [stored]: Array<{ trust_id: string; verified_at: Date }> = await m.query(
      'SELECT trust_id, verified_at FROM trusts WHERE user_id = $1 AND project_id = $2',
      [caller.userId, caller.projectId],
    );
    if (stored) {
      const fresh = now - new Date(stored.verified_at).getTime() < this.verifyEveryMs;
      if (fresh || (await this.stillThere(stored.trust_id))) {
        if (!fresh) await m.query('UPDATE trusts SET verified_at = $3 WHERE user_id = $1 AND project_id = $2', [caller.userId, caller.projectId, new Date(now)]);
        this.remember(key, stored.trust_id, fresh ? new Date(stored.verified_at).getTime() : now);
        return stored.trust_id;
      }
      this.logger.info('the stored Keystone trust is gone; making a new one', { user_id: caller.userId, project_id: caller.projectId, trust_id: stored.trust_id });
    }

    const trusteeId = await this.call('find Trellis\'s own user', () => this.keystone.serviceUserId());
    const roles = [...new Set(caller.roles)];
    const made = await this.call(`create a trust from user ${caller.userId} in project ${caller.projectId}`, () =>
      this.keystone.create(caller.token, { trustorUserId: caller.userId, projectId: caller.projectId, roles }),
    );
    const at = new Date(now);
    await m.query(
      `INSERT INTO trusts (user_id, project_id, trust_id, trustee_user_id, roles, created_at, verified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (user_id, project_id) DO UPDATE SET trust_id = EXCLUDED.trust_id, trustee_user_id = EXCLUDED.trustee_user_id,
         roles = EXCLUDED.roles, created_at = EXCLUDED.created_at, verified_at = EXCLUDED.verified_at`,
      [caller.userId, caller.projectId, made.id, trusteeId, JSON.stringify(roles), at],
    );
    this.logger.info('Keystone trust made', { user_id: caller.userId, project_id: caller.projectId, trust_id: made.id, roles });
    this.remember(key, made.id, now);
    return made.id;
  }

  private async stillThere(trustId: string): Promise<boolean> {
    return (await this.call('read a stored trust', () => this.keystone.get(trustId))) !== null;
  }

  private remember(key: string, trustId: string, verifiedAt: number): void {
    this.known.set(key, { trustId, verifiedAt });
  }

  /**
   * Keystone's refusal (a token that may not make trusts, e.g. a restricted application
   * credential) is the caller's 403; Keystone unreachable is a 503 to try again.
   */
  private async call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof DomainError) throw e;
      const status = (e as { status?: number }).status;
      if (status === 401 || status === 403 || status === 404 || status === 400) {
        throw new DomainError(
          'FORBIDDEN',
          `Trellis acts in Nova with a Keystone trust from you, and could not ${what}: Keystone answered ${status}: ${errorMessage(e)}`,
          'Forbidden',
        );
      }
      throw unavailable(`Trellis could not ${what}: Keystone did not answer (${errorMessage(e)}). Try again later.`);
    }
  }
}
