/**
 * libs/persistence's transaction and outbox helpers, imported in this one file so the call sites
 * stay few.
 */
export { inTransaction } from '@trellis/persistence/transaction';
export { addToOutbox } from '@trellis/persistence/outbox';
export type { OutgoingMessage } from '@trellis/messaging/bus.port';
