import { randomBytes, randomUUID } from 'node:crypto';

/** Where a decision takes its new ids: random in production, a sequence in tests so plans compare. */
export interface IdSource {
  uuid(): string;
  nodeName(): string;
}

/** Random ids: UUIDs, and Senlin's default node names `node-<8 hex>`. */
export const defaultIds: IdSource = {
  uuid: () => randomUUID(),
  nodeName: () => `node-${randomBytes(4).toString('hex')}`,
};
