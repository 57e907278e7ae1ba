import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * Where the cloud strays from what a cluster's policies decided (issue 6): a vanished server group,
 * a member outside its group, anti-affine members sharing a host, a zone distribution off its
 * weights. A finding stays OPEN while detection keeps seeing it and is RESOLVED when it no longer does.
 */
@Entity('cluster_findings')
@Index(['cluster_id', 'status'])
export class ClusterFindingEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') cluster_id: string;
  @Column('varchar', { length: 64 }) project: string;
  /** group_missing | member_outside_group | hosts_shared | zone_imbalance | policy_unreadable */
  @Column('varchar', { length: 32 }) kind: string;
  /** kind, group or zone, host and nodes: the same drift seen again keeps its row */
  @Column('text') fingerprint: string;
  /** the attached policy whose decision the cloud strays from */
  @Column('uuid', { nullable: true }) policy_id: string | null;
  @Column('varchar', { length: 255, nullable: true }) group_id: string | null;
  @Column('varchar', { length: 255, nullable: true }) host: string | null;
  @Column('varchar', { length: 255, nullable: true }) zone: string | null;
  @Column({ ...jsonb, default: [] }) node_ids: string[];
  @Column('text') message: string;
  @Column({ ...jsonb, default: {} }) detail: JsonObject;
  /** OPEN | RESOLVED */
  @Column('varchar', { length: 16 }) status: string;
  /** the action whose detection saw it first, and the one that no longer saw it */
  @Column('uuid', { nullable: true }) found_by: string | null;
  @Column('uuid', { nullable: true }) resolved_by: string | null;
  @Column(tstz) found_at: Date;
  @Column(tstz) last_seen_at: Date;
  @Column({ ...tstz, nullable: true }) resolved_at: Date | null;
}
