import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonb, tstz } from './columns';

/**
 * What the nova-worker last saw in Nova, for the engine to decide on: one row per kind and project.
 * Cloud-wide kinds (availability_zones, hypervisors, host_zones) have project ''; server_groups are
 * stored per project id, as Nova shows them to that project.
 */
@Entity('cloud_facts')
export class CloudFactEntity {
  /** availability_zones | hypervisors | host_zones | server_groups */
  @PrimaryColumn('varchar', { length: 64 }) kind: string;
  /** the project the fact belongs to; '' for a cloud-wide fact */
  @PrimaryColumn('varchar', { length: 64, default: '' }) project: string;
  @Column(jsonb) data: any;
  @Column(tstz) fetched_at: Date;
}
