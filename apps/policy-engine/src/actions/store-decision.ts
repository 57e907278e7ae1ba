import type { Decision } from '@trellis/decisions';
import { DecisionEntity, row, type ActionEntity } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';

/** Writes (or replaces) the record of an action's decision in the caller's transaction. */
export async function storeDecision(m: EntityManager, action: ActionEntity, d: Decision, now: Date): Promise<void> {
  await m.getRepository(DecisionEntity).upsert(
    row<DecisionEntity>({
      action_id: action.id,
      hook: d.hook,
      input: d.input as unknown as Record<string, unknown>,
      output: d.output,
      plan: d.plan as unknown as Record<string, unknown>,
      trace: d.trace,
      created_at: now,
    }),
    ['action_id'],
  );
}
