import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

@Entity('clusters')
@Index(['project', 'name'])
export class ClusterEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('varchar', { length: 255 }) name: string;
  @Column('uuid') profile_id: string;
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64, nullable: true }) domain: string | null;
  @Column({ ...tstz, nullable: true }) init_at: Date | null;
  @Column({ ...tstz, nullable: true }) created_at: Date | null;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
  @Column('int') min_size: number;
  @Column('int') max_size: number;
  @Column('int') desired_capacity: number;
  @Column('int') timeout: number;
  @Column('varchar', { length: 32 }) status: string;
  @Column('text', { default: '' }) status_reason: string;
  @Column({ ...jsonb, default: {} }) metadata: JsonObject;
  @Column({ ...jsonb, default: {} }) data: JsonObject;
  @Column({ ...jsonb, default: {} }) config: JsonObject;
  /** the index the next node of this cluster gets (Senlin's node index) */
  @Column('int', { default: 1 }) next_index: number;
}
