import type { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * libs/persistence's transaction and outbox helpers, imported in this one file so the call sites
 * stay few.
 */
export { addToOutbox, afterCommit, hotQuery, inTransaction, isDatabaseUnavailable, sqlState } from '@trellis/persistence';
export { sqlTextList } from '@trellis/persistence/sql';
import { hotQuery, type SqlStatement } from '@trellis/persistence';
export type { OutgoingMessage } from '@trellis/messaging/bus.port';
export type { SqlStatement } from '@trellis/persistence';

/** Per entity, the INSERT naming every column; built once from TypeORM's metadata. */
const insertSql = new WeakMap<EntityMetadata, string>();

/**
 * INSERT of a complete entity: every column from `row`, converted as TypeORM converts it (jsonb to
 * JSON text, dates), with the statement built once per entity rather than by the query builder on
 * each call. A row missing a column goes through TypeORM's insert(), which writes the column's
 * DEFAULT; its jsonb `Record<string, unknown>` typing needs the cast (the row is complete).
 */
export async function insertRow<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, row: T): Promise<void> {
  const statement = insertRowStatement(manager, entity, row);
  if (statement === null) {
    await manager.getRepository(entity).insert(row as Parameters<ReturnType<EntityManager['getRepository']>['insert']>[0]);
    return;
  }
  await hotQuery(manager, statement.text, statement.params);
}

/**
 * insertRow's INSERT as a statement, to send with the outbox row that follows it (addToOutbox's
 * `with`); null for a row missing a column (insertRow then goes through TypeORM).
 */
export function insertRowStatement<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, row: T): SqlStatement | null {
  const metadata = manager.connection.getMetadata(entity);
  const values: unknown[] = metadata.columns.map((c) => c.getEntityValue(row));
  if (values.includes(undefined)) return null;
  const driver = manager.connection.driver;
  let sql = insertSql.get(metadata);
  if (sql === undefined) {
    const names = metadata.columns.map((c) => driver.escape(c.databaseName));
    sql = `INSERT INTO ${driver.escape(metadata.tableName)} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`;
    insertSql.set(metadata, sql);
  }
  return { text: sql, params: metadata.columns.map((c, i) => driver.preparePersistentValue(values[i], c)) };
}

/** Per entity and shape (project scope, lock, what else the statement reads), the SELECT of one row by id; built once. */
const selectByIdSql = new WeakMap<EntityMetadata, Map<string, Map<string, string>>>();

/** More columns for findById's statement, given the number of the first parameter they may use (after the lookup's own); an empty select list for none. */
export type AlsoSelected = (first: number) => { select: string; params: unknown[] };

/**
 * The row with this id (and, unless `project` is null, of this project) as an entity, read and
 * converted as TypeORM's getOne() would, without the query builder on each call. `forUpdate`
 * locks the row until the caller's transaction ends.
 */
export async function findById<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  id: string,
  opts: { project: string | null; forUpdate?: boolean },
): Promise<T | null> {
  return (await findByIdWith(manager, entity, id, opts))?.row ?? null;
}

/**
 * findById, with `also`'s columns read in the same statement (one round trip): the entity and
 * the raw row (its extra columns by their aliases), or null when no row has the id.
 */
export async function findByIdWith<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  id: string,
  opts: { project: string | null; forUpdate?: boolean },
  also?: AlsoSelected,
): Promise<{ row: T; raw: Record<string, unknown> } | null> {
  if (opts.forUpdate && !manager.queryRunner?.isTransactionActive) throw new Error('findById: forUpdate needs a transaction');
  const metadata = manager.connection.getMetadata(entity);
  const driver = manager.connection.driver;
  const params: unknown[] = opts.project === null ? [id] : [id, opts.project];
  // an empty select list adds nothing (a caller with nothing to add this time)
  const added = also?.(params.length + 1);
  const extra = added?.select ? added : undefined;
  const shape = `${opts.project === null ? 'any' : 'project'}:${opts.forUpdate ? 'lock' : 'read'}`;
  let shapes = selectByIdSql.get(metadata);
  if (!shapes) selectByIdSql.set(metadata, (shapes = new Map()));
  // keyed by the extra select list itself (its callers keep one string per shape: hashed once)
  let texts = shapes.get(shape);
  if (!texts) shapes.set(shape, (texts = new Map()));
  let sql = texts.get(extra?.select ?? '');
  if (sql === undefined) {
    const names = metadata.columns.map((c) => driver.escape(c.databaseName));
    sql = `SELECT ${names.join(', ')}${extra ? `, ${extra.select}` : ''} FROM ${driver.escape(metadata.tableName)} WHERE id = $1`;
    if (opts.project !== null) sql += ' AND project = $2';
    if (opts.forUpdate) sql += ' FOR UPDATE';
    texts.set(extra?.select ?? '', sql);
  }
  const rows: Record<string, unknown>[] = await hotQuery(manager, sql, extra ? [...params, ...extra.params] : params);
  if (rows.length === 0) return null;
  const found = metadata.create(manager.queryRunner, { fromDeserializer: true }) as T;
  for (const c of metadata.columns) c.setEntityValue(found, driver.prepareHydratedValue(rows[0][c.databaseName], c));
  return { row: found, raw: rows[0] };
}

/** Per entity, alias and prefix, the select list of selectColumns; built once. */
const columnListSql = new WeakMap<EntityMetadata, Map<string, string>>();

/**
 * Every column of `entity`'s table as `alias`'s, each named `prefix` + its column name: to read a
 * row of it in another statement (a join) and make the entity with `hydrate`.
 */
export function selectColumns(manager: EntityManager, entity: EntityTarget<ObjectLiteral>, alias: string, prefix: string): string {
  const metadata = manager.connection.getMetadata(entity);
  let lists = columnListSql.get(metadata);
  if (!lists) columnListSql.set(metadata, (lists = new Map()));
  const shape = `${alias}:${prefix}`;
  let sql = lists.get(shape);
  if (sql === undefined) {
    const driver = manager.connection.driver;
    sql = metadata.columns.map((c) => `${alias}.${driver.escape(c.databaseName)} AS ${driver.escape(prefix + c.databaseName)}`).join(', ');
    lists.set(shape, sql);
  }
  return sql;
}

/** The entity read by `selectColumns` with this prefix, converted as findById converts it; null when the row has none (a join that found nothing). */
export function hydrate<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, raw: Record<string, unknown>, prefix: string): T | null {
  const metadata = manager.connection.getMetadata(entity);
  if (metadata.primaryColumns.some((c) => raw[prefix + c.databaseName] === null || raw[prefix + c.databaseName] === undefined)) return null;
  const driver = manager.connection.driver;
  const found = metadata.create(manager.queryRunner, { fromDeserializer: true }) as T;
  for (const c of metadata.columns) c.setEntityValue(found, driver.prepareHydratedValue(raw[prefix + c.databaseName], c));
  return found;
}
