import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * The list indexes (migration 1795900000000) follow GET /v1/actions' order, created_at then id: one
 * project's actions, one cluster's, everyone's (global_project).
 */
@Entity('actions')
@Index(['target', 'status'])
@Index(['cluster_id', 'created_at', 'id'])
@Index(['status', 'lease_expires_at'])
@Index(['project', 'created_at', 'id'])
@Index(['created_at', 'id'])
export class ActionEntity {
  @PrimaryColumn('uuid') id: string;
  /** e.g. cluster_scale_out_1a2b3c4d */
  @Column('varchar', { length: 255 }) name: string;
  @Column('uuid', { nullable: true }) cluster_id: string | null;
  /** the cluster or node the action works on */
  @Column('uuid') target: string;
  /** e.g. CLUSTER_SCALE_OUT */
  @Column('varchar', { length: 64 }) action: string;
  /** "RPC Request" | "Derived Action" */
  @Column('varchar', { length: 64 }) cause: string;
  @Column('varchar', { length: 128, nullable: true }) owner: string | null;
  @Column('int', { default: -1 }) interval: number;
  /** epoch seconds (floats), as Senlin reports them */
  @Column('double precision', { nullable: true }) start_time: number | null;
  @Column('double precision', { nullable: true }) end_time: number | null;
  @Column('int') timeout: number;
  @Column('varchar', { length: 32 }) status: string;
  @Column('text', { default: '' }) status_reason: string;
  @Column({ ...jsonb, default: {} }) inputs: JsonObject;
  @Column({ ...jsonb, default: {} }) outputs: JsonObject;
  @Column({ ...jsonb, default: {} }) data: JsonObject;
  @Column({ ...jsonb, default: [] }) depends_on: string[];
  @Column({ ...jsonb, default: [] }) depended_by: string[];
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64, nullable: true }) domain: string | null;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
  /** the engine instance working on this action, and until when (resume after a crash) */
  @Column('varchar', { length: 128, nullable: true }) lease_owner: string | null;
  @Column({ ...tstz, nullable: true }) lease_expires_at: Date | null;
  @Column('int', { default: 0 }) attempts: number;
}
