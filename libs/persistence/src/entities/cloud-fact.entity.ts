import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonb, tstz } from './columns';

/** What the nova-worker last saw in Nova (zones, hypervisors, server groups), for the engine to decide on. */
@Entity('cloud_facts')
export class CloudFactEntity {
  /** availability_zones | hypervisors | server_groups */
  @PrimaryColumn('varchar', { length: 64 }) kind: string;
  @Column(jsonb) data: any;
  @Column(tstz) fetched_at: Date;
}
