import type { DataSource, EntityManager } from 'typeorm';
import { requireText, requireUuid } from './guards';
import { ActionEntity } from './entities';
import { hotQuery } from './prepared';

/** Per data source: by the extra select list (its callers keep one string each), the statement. */
const lockActionSqlOf = new WeakMap<DataSource, Map<string, string>>();

/**
 * The inbox entry and the action's row lock, the action's columns named (a prepared statement must
 * not select `a.*`: see ./prepared.ts), and `also` after them; built once per data source from the
 * entity's columns.
 */
function lockActionSql(manager: EntityManager, also: string): string {
  let texts = lockActionSqlOf.get(manager.connection);
  if (texts === undefined) lockActionSqlOf.set(manager.connection, (texts = new Map()));
  let sql = texts.get(also);
  if (sql === undefined) {
    const columns = manager.connection.getMetadata(ActionEntity).columns.map((c) => `a."${c.databaseName}"`).join(', ');
    // A data-modifying WITH runs to completion whether or not the SELECT finds the row.
    sql = `WITH fresh AS (
       INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())
       ON CONFLICT (consumer, message_id) DO NOTHING
       RETURNING message_id)
     SELECT ${columns}, (SELECT count(*) FROM fresh)::int AS inbox_fresh${also ? `, ${also}` : ''} FROM actions a WHERE a.id = $3 FOR UPDATE`;
    texts.set(also, sql);
  }
  return sql;
}

/**
 * More columns for markProcessedAndLockAction's statement: a select list that may name the locked
 * action as `a` and use parameters from `$4` (`params`). Its subqueries read the statement's
 * snapshot, taken before the row lock is granted: only what cannot change while the action is
 * locked or active belongs here (its decision, say), not what another transaction may be changing.
 */
export interface AlsoWithAction {
  select: string;
  params?: readonly unknown[];
}

/**
 * Records that `consumer` applied the message `messageId`, in the caller's transaction. Returns false
 * when it was recorded before: the caller then skips the message's effects and just acks it.
 *
 * Two deliveries of one message handled at once cannot both get true: the second insert waits for the
 * first transaction and gets false if it commits (true if it rolls back, as nothing was applied).
 */
export async function markProcessed(manager: EntityManager, consumer: string, messageId: string): Promise<boolean> {
  requireText('consumer', consumer, 64);
  requireUuid('messageId', messageId);
  const rows: unknown[] = await hotQuery(
    manager,
    `INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())
     ON CONFLICT (consumer, message_id) DO NOTHING
     RETURNING message_id`,
    [consumer, messageId],
  );
  return rows.length === 1;
}

/**
 * markProcessed, and the action `actionId` locked FOR UPDATE, in one statement (one round trip on
 * every engine message's path). `row` is the locked action (null when there is none); `fresh` is
 * markProcessed's answer, and is computed even when the action is missing. `also`'s columns come
 * back by their aliases in `also` (when the action was found).
 */
export async function markProcessedAndLockAction(
  manager: EntityManager,
  consumer: string,
  messageId: string,
  actionId: string,
  also?: AlsoWithAction,
): Promise<{ fresh: boolean; row: ActionEntity | null; also?: Record<string, unknown> }> {
  requireText('consumer', consumer, 64);
  requireUuid('messageId', messageId);
  requireUuid('actionId', actionId);
  const rows: Array<Record<string, unknown> & { inbox_fresh: number }> = await hotQuery(
    manager,
    lockActionSql(manager, also?.select ?? ''),
    [consumer, messageId, actionId, ...(also?.params ?? [])],
  );
  if (rows.length > 0) {
    const { inbox_fresh, ...columns } = rows[0];
    // the driver already gives every column its entity type (jsonb parsed, timestamptz as Date,
    // double precision as number): the query builder's hydration would only add work
    if (!also) return { fresh: inbox_fresh === 1, row: Object.assign(new ActionEntity(), columns) };
    // the action's columns to its entity, the rest (also's) by their aliases
    const row = new ActionEntity() as unknown as Record<string, unknown>;
    for (const c of manager.connection.getMetadata(ActionEntity).columns) {
      row[c.databaseName] = columns[c.databaseName];
      delete columns[c.databaseName];
    }
    return { fresh: inbox_fresh === 1, row: row as unknown as ActionEntity, also: columns };
  }
  // No action: whether this transaction wrote the inbox entry (its xmin is ours) says if it is fresh.
  const mine: Array<{ mine: boolean }> = await manager.query(
    `SELECT xmin::text::bigint = txid_current() % 4294967296 AS mine FROM processed_messages WHERE consumer = $1 AND message_id = $2`,
    [consumer, messageId],
  );
  return { fresh: mine[0]?.mine === true, row: null };
}
