import type { Decision } from '@trellis/decisions';
import { hotQuery, type ActionEntity, type SqlStatement } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';

/** Writes (or replaces) the record of an action's decision in the caller's transaction. */
export async function storeDecision(m: EntityManager, action: ActionEntity, d: Decision, now: Date): Promise<void> {
  const { text, params } = decisionStatement(action, d, now);
  await hotQuery(m, text, params);
}

/** storeDecision's INSERT, to send with an outbox row that follows it (addToOutbox's `with`). */
export function decisionStatement(action: ActionEntity, d: Decision, now: Date): SqlStatement {
  return {
    text: `INSERT INTO decisions (action_id, hook, input, output, plan, trace, created_at)
     VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6::jsonb, $7)
     ON CONFLICT (action_id) DO UPDATE
       SET hook = EXCLUDED.hook, input = EXCLUDED.input, output = EXCLUDED.output, plan = EXCLUDED.plan,
           trace = EXCLUDED.trace, created_at = EXCLUDED.created_at`,
    params: [action.id, d.hook, json(d.input), json(d.output), json(d.plan), json(d.trace), now],
  };
}

/** a jsonb parameter: SQL NULL for null, as the entity's columns store it */
const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
