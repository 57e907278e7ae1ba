import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/** A policy bound to a cluster (Senlin's cluster_policy binding). */
@Entity('cluster_policies')
@Index(['cluster_id', 'policy_id'], { unique: true })
@Index(['policy_id'])
export class ClusterPolicyEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') cluster_id: string;
  @Column('uuid') policy_id: string;
  @Column('boolean', { default: true }) enabled: boolean;
  @Column('int') priority: number;
  /** binding data, wrapped per policy class and version as Senlin did */
  @Column({ ...jsonb, default: {} }) data: JsonObject;
  @Column({ ...tstz, nullable: true }) last_op: Date | null;
  /** decision 16: bindings run by priority, then attach time, then id */
  @Column(tstz) attached_at: Date;
}
