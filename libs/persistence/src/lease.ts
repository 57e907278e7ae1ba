import {
  Raw,
  type EntityManager,
  type EntityTarget,
  type FindOptionsOrder,
  type FindOptionsWhere,
  type ObjectLiteral,
} from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { requirePositiveInt, requirePositiveNumber, requireText, requireUuid } from './guards';

/** A row that one process at a time works on (actions, nodes). */
export interface Leased extends ObjectLiteral {
  id: string;
  lease_owner: string | null;
  lease_expires_at: Date | null;
}

export interface ClaimOptions<T extends Leased> {
  /** which rows may be claimed (TypeORM find conditions; an array means any of them) */
  where: FindOptionsWhere<T> | FindOptionsWhere<T>[];
  /** the instance taking the lease, e.g. `policy-engine@host:pid` */
  leaseOwner: string;
  leaseSeconds: number;
  limit: number;
  /** which rows go first (default by id) */
  order?: FindOptionsOrder<T>;
}

/**
 * Claims up to `limit` rows matching `where` whose lease is free (never taken, released, or expired),
 * skipping rows another transaction has locked, and gives them to `leaseOwner` for `leaseSeconds`.
 * Returns the claimed rows with their new lease. Two claimers never get the same row; a row whose
 * owner died comes back once its lease has expired. Lease times are the database's clock at the
 * statement (clock_timestamp(), not the transaction's start: the caller's transaction may be long).
 *
 * Runs in the caller's transaction when `manager` has one (the row locks then last until it ends),
 * otherwise in a short transaction of its own.
 */
export async function claimExpired<T extends Leased>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  options: ClaimOptions<T>,
): Promise<T[]> {
  const owner = requireText('leaseOwner', options.leaseOwner, 128);
  const leaseSeconds = requirePositiveNumber('leaseSeconds', options.leaseSeconds);
  const limit = requirePositiveInt('limit', options.limit);
  const free = Raw((column) => `(${column} IS NULL OR ${column} <= clock_timestamp())`);
  const where = (Array.isArray(options.where) ? options.where : [options.where]).map(
    (w) => ({ ...w, lease_expires_at: free }) as FindOptionsWhere<T>,
  );
  const order = options.order ?? ({ id: 'ASC' } as FindOptionsOrder<T>);

  const claim = async (m: EntityManager): Promise<T[]> => {
    const rows = await m.getRepository(entity).find({
      where,
      order,
      take: limit,
      lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
    });
    if (rows.length === 0) return [];
    const result = await m
      .createQueryBuilder()
      .update(entity)
      .set({ lease_owner: owner, lease_expires_at: () => 'clock_timestamp() + make_interval(secs => :leaseSeconds)' } as QueryDeepPartialEntity<T>)
      .setParameter('leaseSeconds', leaseSeconds)
      .whereInIds(rows.map((r) => r.id))
      .returning(['id', 'lease_expires_at'])
      .execute();
    const expiresAt = new Map((result.raw as { id: string; lease_expires_at: Date }[]).map((r) => [r.id, r.lease_expires_at]));
    for (const row of rows) {
      (row as Leased).lease_owner = owner;
      (row as Leased).lease_expires_at = expiresAt.get(row.id) ?? null;
    }
    return rows;
  };
  return manager.queryRunner?.isTransactionActive ? claim(manager) : manager.transaction(claim);
}

/**
 * Extends `leaseOwner`'s lease on row `id` to `leaseSeconds` from now. False when the lease is no
 * longer theirs (released, or expired and claimed by another): the caller must stop working on it.
 */
export async function renewLease<T extends Leased>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  id: string,
  leaseOwner: string,
  leaseSeconds: number,
): Promise<boolean> {
  requireUuid('id', id);
  requireText('leaseOwner', leaseOwner, 128);
  requirePositiveNumber('leaseSeconds', leaseSeconds);
  const result = await manager
    .createQueryBuilder()
    .update(entity)
    .set({ lease_expires_at: () => 'clock_timestamp() + make_interval(secs => :leaseSeconds)' } as QueryDeepPartialEntity<T>)
    .where('id = :id AND lease_owner = :leaseOwner', { id, leaseOwner, leaseSeconds })
    .execute();
  return result.affected === 1;
}

/** Gives up `leaseOwner`'s lease on row `id`; false when it was not theirs (any more). */
export async function releaseLease<T extends Leased>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  id: string,
  leaseOwner: string,
): Promise<boolean> {
  requireUuid('id', id);
  requireText('leaseOwner', leaseOwner, 128);
  const result = await manager
    .createQueryBuilder()
    .update(entity)
    .set({ lease_owner: null, lease_expires_at: null } as unknown as QueryDeepPartialEntity<T>)
    .where('id = :id AND lease_owner = :leaseOwner', { id, leaseOwner })
    .execute();
  return result.affected === 1;
}
