import { Column, Entity, PrimaryColumn } from 'typeorm';
import { tstz } from './columns';

/**
 * One running Trellis process component (gateway, policy-engine, nova-worker), as Senlin's `service`
 * table: it registers when it starts, renews `updated_at` while it runs and removes itself when it
 * stops cleanly. `GET /v1/services` lists these rows; a row not renewed for a while is shown `down`.
 */
@Entity('services')
export class ServiceEntity {
  @PrimaryColumn('uuid') id: string;
  /** `trellis-policy-engine` */
  @Column('varchar', { length: 255 }) binary: string;
  @Column('varchar', { length: 255 }) host: string;
  /** the queue or endpoint it serves */
  @Column('varchar', { length: 255 }) topic: string;
  @Column('boolean', { default: false }) disabled: boolean;
  @Column('varchar', { length: 255, nullable: true }) disabled_reason: string | null;
  /**
   * the message types it consumes, each with the schema versions it takes (`{"work.order": [1, 2]}`);
   * null: a component of a release before this column, which takes version 1 of every message
   */
  @Column('jsonb', { nullable: true }) accepts: Record<string, number[]> | null;
  @Column(tstz) created_at: Date;
  @Column(tstz) updated_at: Date;
}
