import { badRequest, notFound } from '@trellis/common';
import { Brackets, type EntityManager, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { findById } from '../infra/persistence.adapter';
import { isUuid } from './list-query';

export interface LookupOptions {
  /** the caller's project; objects of other projects do not exist for it */
  project: string | null;
  /** some collections (events, actions) have no names */
  byName?: boolean;
  /**
   * lock the row found (FOR UPDATE, in the caller's transaction): its columns are then the latest
   * committed, and no other transaction changes or locks it until this one ends
   */
  forUpdate?: boolean;
}

/** what a short id (an id prefix) may look like */
const SHORT_ID = /^[0-9a-f-]+$/i;

const ambiguous = (identity: string) =>
  badRequest(`Multiple results found matching the query criteria '${identity}'. Please be more specific.`, 'MultipleChoices');

/**
 * Senlin's `find(identity)`: a UUID-looking identity is tried as an id, then as a name; anything
 * else as a name, then as an id prefix (short id). Several matches are a 400.
 */
export async function lookup<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  identity: string,
  opts: LookupOptions,
): Promise<T | null> {
  // no row holds a NUL character (PostgreSQL stores none, and would refuse to compare one)
  if (identity.includes('\u0000')) return null;
  const repo = manager.getRepository(entity);
  const scoped = (qb: ReturnType<typeof repo.createQueryBuilder>) => {
    const locked = opts.forUpdate ? qb.setLock('pessimistic_write') : qb;
    return opts.project === null ? locked : locked.andWhere('o.project = :project', { project: opts.project });
  };
  const byName = async () => {
    if (opts.byName === false) return null;
    const rows = await scoped(repo.createQueryBuilder('o').where('o.name = :name', { name: identity })).limit(2).getMany();
    if (rows.length > 1) throw ambiguous(identity);
    return rows[0] ?? null;
  };
  if (isUuid(identity)) {
    const row = await findById(manager, entity, identity.toLowerCase(), opts);
    return row ?? (await byName());
  }
  const named = await byName();
  if (named) return named;
  if (!SHORT_ID.test(identity)) return null;
  const rows = await scoped(
    repo.createQueryBuilder('o').where('CAST(o.id AS text) LIKE :prefix', { prefix: `${identity.toLowerCase()}%` }),
  )
    .limit(2)
    .getMany();
  if (rows.length > 1) throw ambiguous(identity);
  return rows[0] ?? null;
}

/** lookup, or 404 `The <kind> '<identity>' could not be found.` */
export async function mustFind<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  kind: string,
  identity: string,
  opts: LookupOptions,
): Promise<T> {
  const found = await lookup(manager, entity, identity, opts);
  if (!found) throw notFound(kind, identity);
  return found;
}

/**
 * `lookup` for many identities in one query: each identity resolved as `lookup` would (an id, else a
 * name, else a short id; several matches are a 400 naming the first such identity in the order
 * given). The answer maps every identity to its row, or to null when nothing matched.
 */
export async function lookupMany<T extends ObjectLiteral & { id: string; name: string }>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  identities: readonly string[],
  opts: Pick<LookupOptions, 'project'>,
): Promise<Map<string, T | null>> {
  const ids = identities.filter(isUuid).map((i) => i.toLowerCase());
  const prefixes = identities.filter((i) => !isUuid(i) && SHORT_ID.test(i)).map((i) => `${i.toLowerCase()}%`);
  const qb = manager.getRepository(entity).createQueryBuilder('o');
  qb.where(
    new Brackets((or) => {
      or.where('o.name IN (:...names)', { names: identities });
      if (ids.length) or.orWhere('o.id IN (:...ids)', { ids });
      if (prefixes.length) or.orWhere('CAST(o.id AS text) LIKE ANY(:prefixes)', { prefixes });
    }),
  );
  if (opts.project !== null) qb.andWhere('o.project = :project', { project: opts.project });
  const rows = identities.length ? await qb.getMany() : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  const byName = new Map<string, T[]>();
  for (const r of rows) {
    const same = byName.get(r.name);
    if (same) same.push(r);
    else byName.set(r.name, [r]);
  }
  const one = (identity: string, matches: readonly T[] = []): T | null => {
    if (matches.length > 1) throw ambiguous(identity);
    return matches[0] ?? null;
  };
  const resolve = (identity: string): T | null => {
    if (isUuid(identity)) return byId.get(identity.toLowerCase()) ?? one(identity, byName.get(identity));
    const named = one(identity, byName.get(identity));
    if (named || !SHORT_ID.test(identity)) return named;
    return one(identity, rows.filter((r) => r.id.startsWith(identity.toLowerCase())));
  };
  return new Map(identities.map((identity) => [identity, resolve(identity)]));
}
