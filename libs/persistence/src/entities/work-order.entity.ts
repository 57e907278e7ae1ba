import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/** The nova-worker's record of one work order: what it applied and whether it reported back. */
@Entity('work_orders')
export class WorkOrderEntity {
  @PrimaryColumn('uuid') action_id: string;
  @Column('uuid', { nullable: true }) cluster_id: string | null;
  @Column(jsonb) payload: JsonObject;
  /** APPLYING → BUILDING → DONE */
  @Column('varchar', { length: 16 }) status: string;
  @Column('uuid', { nullable: true }) result_message_id: string | null;
  /** server group refs of the order → ids Nova gave them */
  @Column({ ...jsonb, default: {} }) groups: Record<string, string>;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
}
