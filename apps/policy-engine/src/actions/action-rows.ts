import { hotQuery, type ActionEntity, type SqlStatement } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';

/**
 * Writes back the columns the engine changes on an action it holds locked in this transaction (its
 * progress: status, times, owner and lease, data and outputs), in one UPDATE. `repository.save()`
 * would first SELECT the row again to find what changed: a round trip on every action's path.
 */
export async function writeActionState(m: EntityManager, action: ActionEntity): Promise<void> {
  const { text, params } = actionStateStatement(action);
  await hotQuery(m, text, params);
}

/** writeActionState's UPDATE, to send with the outbox row that follows it (addToOutbox's `with`). */
export function actionStateStatement(action: ActionEntity): SqlStatement {
  return {
    text: `UPDATE actions
        SET status = $2, status_reason = $3, owner = $4, start_time = $5, end_time = $6,
            data = $7::jsonb, outputs = $8::jsonb, lease_owner = $9, lease_expires_at = $10,
            attempts = $11, updated_at = $12
      WHERE id = $1`,
    params: [
      action.id,
      action.status,
      action.status_reason ?? '',
      action.owner,
      action.start_time,
      action.end_time,
      JSON.stringify(action.data ?? {}),
      JSON.stringify(action.outputs ?? {}),
      action.lease_owner,
      action.lease_expires_at,
      action.attempts,
      action.updated_at,
    ],
  };
}
