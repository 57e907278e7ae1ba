import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * (project, init_at, id): GET /v1/nodes' order for one project (migration 1795900000000).
 * (cluster_id, index, id): a cluster's node ids from the index alone; the partial expression index
 * on (project, data.placement.host) listed a project's recorded hosts (migration 1795945000000) and
 * is read only by the release before 1796000000000, whose trigger puts every host a node records
 * into project_hosts.
 * (cluster_id, placement_zone, created_at, index) and the partial (cluster_id) of the bad nodes: a
 * scale-in's candidates (migrations 1795960000000, 1795970000000); (cluster_id, placement_zone,
 * profile_id, index) INCLUDE (status, tainted, created_at): a summarised snapshot's counts per zone
 * from the index alone, and OLDEST_PROFILE_FIRST's candidates (1795970000000).
 */
@Entity('nodes')
@Index(['cluster_id', 'index', 'id'])
@Index('IDX_nodes_project_placement_host', { synchronize: false })
@Index('IDX_nodes_cluster_zone_age', { synchronize: false })
@Index('IDX_nodes_cluster_zone_profile', { synchronize: false })
@Index('IDX_nodes_cluster_bad', { synchronize: false })
@Index(['project', 'name'])
@Index(['action_id'])
@Index(['status', 'lease_expires_at'])
@Index(['project', 'init_at', 'id'])
export class NodeEntity {
  /** chosen by the policy-engine in the decision, so a redelivered work order cannot add a row */
  @PrimaryColumn('uuid') id: string;
  @Column('varchar', { length: 255 }) name: string;
  @Column('uuid', { nullable: true }) cluster_id: string | null;
  @Column('uuid') profile_id: string;
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64, nullable: true }) domain: string | null;
  /** the Nova server id */
  @Column('varchar', { length: 64, nullable: true }) physical_id: string | null;
  @Column('int', { default: -1 }) index: number;
  @Column('varchar', { length: 255, nullable: true }) role: string | null;
  @Column('varchar', { length: 32 }) status: string;
  @Column('text', { default: '' }) status_reason: string;
  /** `placement: {zone, servergroup, host}` and anything policies record about the node */
  @Column({ ...jsonb, default: {} }) data: JsonObject;
  /**
   * `data.placement.zone` when it is a string (the zone policies read, nodeZone), kept by PostgreSQL
   * for the indexes a summarised snapshot reads (migration 1795970000000): nobody writes it, and
   * entities do not load it.
   */
  @Column({
    type: 'text',
    nullable: true,
    generatedType: 'STORED',
    asExpression: `CASE WHEN jsonb_typeof("data" #> '{placement,zone}') = 'string' THEN "data" #>> '{placement,zone}' END`,
    select: false,
    insert: false,
    update: false,
  })
  readonly placement_zone?: string | null;
  @Column({ ...jsonb, default: {} }) metadata: JsonObject;
  @Column('boolean', { default: false }) tainted: boolean;
  @Column({ ...tstz, nullable: true }) init_at: Date | null;
  @Column({ ...tstz, nullable: true }) created_at: Date | null;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
  /** the action currently creating or deleting this node */
  @Column('uuid', { nullable: true }) action_id: string | null;
  /** which worker instance is watching this node's build/delete, and until when */
  @Column('varchar', { length: 128, nullable: true }) lease_owner: string | null;
  @Column({ ...tstz, nullable: true }) lease_expires_at: Date | null;
  /** when a build that has not reached ACTIVE is given up */
  @Column({ ...tstz, nullable: true }) build_deadline: Date | null;
}
