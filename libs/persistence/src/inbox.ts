import type { DataSource, EntityManager } from 'typeorm';
import { requireText, requireUuid } from './guards';
import { changedCount } from './sql';

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
  const rows: unknown[] = await manager.query(
    `INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())
     ON CONFLICT (consumer, message_id) DO NOTHING
     RETURNING message_id`,
    [consumer, messageId],
  );
  return rows.length === 1;
}

/** Forgets message ids recorded more than `olderThanMs` ago (far beyond any redelivery) and returns how many. */
export async function pruneProcessedMessages(db: DataSource | EntityManager, olderThanMs: number): Promise<number> {
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new Error(`olderThanMs must be a number of at least 0, got ${olderThanMs}`);
  }
  return changedCount(
    await db.query(`DELETE FROM processed_messages WHERE processed_at < now() - make_interval(secs => $1)`, [
      olderThanMs / 1000,
    ]),
  );
}
