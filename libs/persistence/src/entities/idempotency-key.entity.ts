import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * A write the gateway answered once, by the caller's key: the `Idempotency-Key` header (REST) or
 * the AMQP `message_id` (RPC). Written in the transaction that stores the write's action, so the
 * key exists exactly when the action does; a retry with the key gets `response` back instead of
 * starting another action. Rows expire after a day and are pruned.
 */
@Entity('idempotency_keys')
export class IdempotencyKeyEntity {
  /** the caller's project ('' for a token without one) and user: a key is the caller's own */
  @PrimaryColumn('varchar', { length: 64 }) project: string;
  @PrimaryColumn('varchar', { length: 64 }) user_id: string;
  /** `http` (Idempotency-Key header) or `rpc` (message id): the two never answer for each other */
  @PrimaryColumn('varchar', { length: 8 }) transport: string;
  @PrimaryColumn('varchar', { length: 255 }) key: string;
  /** sha256 of what the request asked (operation, parameters, body): another request with the key is refused */
  @Column('varchar', { length: 64 }) fingerprint: string;
  /** the action the write started, if it started one */
  @Column('uuid', { nullable: true }) action_id: string | null;
  /** `{status, body, location}` as first answered; null only inside the transaction that claimed the key */
  @Column({ ...jsonb, nullable: true }) response: JsonObject | null;
  @Column(tstz) created_at: Date;
  @Index()
  @Column(tstz)
  expires_at: Date;
}
