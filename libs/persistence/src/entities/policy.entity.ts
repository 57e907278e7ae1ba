import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

@Entity('policies')
@Index(['project', 'name'])
export class PolicyEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('varchar', { length: 255 }) name: string;
  /** `<type>-<version>`, e.g. senlin.policy.zone_placement-1.0 */
  @Column('varchar', { length: 255 }) type: string;
  @Column(jsonb) spec: JsonObject;
  @Column({ ...jsonb, default: {} }) data: JsonObject;
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64, nullable: true }) domain: string | null;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
}
