import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * Messages written in the same transaction as the state change they announce; the outbox relay
 * publishes them with publisher confirms and only then marks them published.
 */
@Entity('outbox')
@Index(['published_at', 'id'])
@Index('IDX_outbox_set_aside', { synchronize: false })
export class OutboxEntity {
  /** bigint: pg returns it as a string */
  @PrimaryGeneratedColumn('increment', { type: 'bigint' }) id: string;
  @Column('varchar', { length: 128 }) exchange: string;
  @Column('varchar', { length: 255 }) routing_key: string;
  @Index({ unique: true })
  @Column('uuid')
  message_id: string;
  @Column('varchar', { length: 128, nullable: true }) type: string | null;
  @Column('varchar', { length: 128, nullable: true }) correlation_id: string | null;
  @Column(jsonb) payload: JsonObject;
  @Column({ ...jsonb, default: {} }) headers: JsonObject;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) published_at: Date | null;
  @Column('int', { default: 0 }) attempts: number;
  @Column('text', { nullable: true }) last_error: string | null;
  /**
   * Not claimable before this time: a relay's lease while it publishes the row (so two relays never
   * publish it at once, and a crashed relay's claim runs out), or the retry time after a failure.
   */
  @Column({ ...tstz, nullable: true }) claimed_until: Date | null;
  /**
   * Set aside: the row can never be published (its message is larger than the broker takes), so no
   * relay claims or retries it; `last_error` says why (migration OutboxSetAside1795990000000).
   */
  @Column({ ...tstz, nullable: true }) failed_at: Date | null;
}
