import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * libs/persistence's transaction and outbox helpers, imported in this one file so the call sites
 * stay few.
 */
export { addToOutbox, inTransaction } from '@trellis/persistence';
export type { OutgoingMessage } from '@trellis/messaging/bus.port';

/**
 * INSERT of a complete entity. TypeORM's insert() types jsonb `Record<string, unknown>` columns as
 * deep-partial entities, which a plain object type does not satisfy; the row is complete, so the
 * cast is safe.
 */
export async function insertRow<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, row: T): Promise<void> {
  await manager.getRepository(entity).insert(row as Parameters<ReturnType<EntityManager['getRepository']>['insert']>[0]);
}
