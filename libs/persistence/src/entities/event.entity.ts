import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * GET /v1/events' order is timestamp then id: (project, timestamp, id) and (cluster_id, timestamp,
 * id) serve one project's and one cluster's events (migration 1795900000000), retention's (timestamp)
 * everyone's (global_project; ties sorted on id from there). Other sort keys sort in SQL.
 */
@Entity('events')
@Index(['project', 'timestamp', 'id'])
@Index(['cluster_id', 'timestamp', 'id'])
@Index(['oid'])
@Index(['timestamp'])
export class EventEntity {
  @PrimaryColumn('uuid') id: string;
  @Column(tstz) timestamp: Date;
  @Column('uuid', { nullable: true }) oid: string | null;
  @Column('varchar', { length: 255, nullable: true }) oname: string | null;
  /** CLUSTER | NODE */
  @Column('varchar', { length: 32 }) otype: string;
  @Column('uuid', { nullable: true }) cluster_id: string | null;
  /** logging level as a number: 50 CRITICAL, 40 ERROR, 30 WARN, 20 INFO, 10 DEBUG */
  @Column('int') level: number;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64, nullable: true }) action: string | null;
  @Column('varchar', { length: 64, nullable: true }) status: string | null;
  @Column('text', { default: '' }) status_reason: string;
  @Column({ ...jsonb, default: {} }) meta_data: JsonObject;
}
