import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { tstz } from './columns';

/** Inbox: a message id a consumer has applied, written in the consumer's own transaction. */
@Entity('processed_messages')
@Index(['processed_at'])
export class ProcessedMessageEntity {
  @PrimaryColumn('varchar', { length: 64 }) consumer: string;
  @PrimaryColumn('uuid') message_id: string;
  @Column(tstz) processed_at: Date;
}
