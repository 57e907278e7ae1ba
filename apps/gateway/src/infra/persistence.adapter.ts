import type { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * libs/persistence's transaction and outbox helpers, imported in this one file so the call sites
 * stay few.
 */
export { addToOutbox, afterCommit, inTransaction, isDatabaseUnavailable, sqlState } from '@trellis/persistence';
export type { OutgoingMessage } from '@trellis/messaging/bus.port';

/** Per entity, the INSERT naming every column; built once from TypeORM's metadata. */
const insertSql = new WeakMap<EntityMetadata, string>();

/**
 * INSERT of a complete entity: every column from `row`, converted as TypeORM converts it (jsonb to
 * JSON text, dates), with the statement built once per entity rather than by the query builder on
 * each call. A row missing a column goes through TypeORM's insert(), which writes the column's
 * DEFAULT; its jsonb `Record<string, unknown>` typing needs the cast (the row is complete).
 */
export async function insertRow<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, row: T): Promise<void> {
  const metadata = manager.connection.getMetadata(entity);
  const values: unknown[] = metadata.columns.map((c) => c.getEntityValue(row));
  if (values.includes(undefined)) {
    await manager.getRepository(entity).insert(row as Parameters<ReturnType<EntityManager['getRepository']>['insert']>[0]);
    return;
  }
  const driver = manager.connection.driver;
  let sql = insertSql.get(metadata);
  if (sql === undefined) {
    const names = metadata.columns.map((c) => driver.escape(c.databaseName));
    sql = `INSERT INTO ${driver.escape(metadata.tableName)} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`;
    insertSql.set(metadata, sql);
  }
  await manager.query(
    sql,
    metadata.columns.map((c, i) => driver.preparePersistentValue(values[i], c)),
  );
}

/** Per entity and shape (project scope, lock), the SELECT of one row by id; built once. */
const selectByIdSql = new WeakMap<EntityMetadata, Map<string, string>>();

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
  if (opts.forUpdate && !manager.queryRunner?.isTransactionActive) throw new Error('findById: forUpdate needs a transaction');
  const metadata = manager.connection.getMetadata(entity);
  const driver = manager.connection.driver;
  const shape = `${opts.project === null ? 'any' : 'project'}:${opts.forUpdate ? 'lock' : 'read'}`;
  let shapes = selectByIdSql.get(metadata);
  if (!shapes) selectByIdSql.set(metadata, (shapes = new Map()));
  let sql = shapes.get(shape);
  if (sql === undefined) {
    const names = metadata.columns.map((c) => driver.escape(c.databaseName));
    sql = `SELECT ${names.join(', ')} FROM ${driver.escape(metadata.tableName)} WHERE id = $1`;
    if (opts.project !== null) sql += ' AND project = $2';
    if (opts.forUpdate) sql += ' FOR UPDATE';
    shapes.set(shape, sql);
  }
  const rows: Record<string, unknown>[] = await manager.query(sql, opts.project === null ? [id] : [id, opts.project]);
  if (rows.length === 0) return null;
  const found = metadata.create(manager.queryRunner, { fromDeserializer: true }) as T;
  for (const c of metadata.columns) c.setEntityValue(found, driver.prepareHydratedValue(rows[0][c.databaseName], c));
  return found;
}
