import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * A Senlin receiver: a webhook that runs `action` on `cluster_id` with `params` as the receiver's
 * owner (`user`, `project`). The id is the webhook's credential (docs/SECURITY.md, Webhooks): it
 * is looked up by exact match only when a webhook is triggered.
 */
@Entity('receivers')
@Index(['project', 'name'])
export class ReceiverEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('varchar', { length: 255 }) name: string;
  /** `webhook` (Trellis has no message service, so no `message` receiver is ever stored) */
  @Column('varchar', { length: 255 }) type: string;
  /** the target cluster; a receiver whose cluster is deleted is deleted with it */
  @Index()
  @Column('uuid', { nullable: true })
  cluster_id: string | null;
  /** the cluster action a trigger runs, e.g. CLUSTER_SCALE_OUT */
  @Column('varchar', { length: 255, nullable: true }) action: string | null;
  /** Senlin's `actor`: `{trust_id}` of the owner's trust when the receiver was made (never a secret) */
  @Column({ ...jsonb, default: {} }) actor: JsonObject;
  /** the action's inputs; a trigger's body is merged over them */
  @Column({ ...jsonb, default: {} }) params: JsonObject;
  /** `{alarm_url}` for a webhook */
  @Column({ ...jsonb, default: {} }) channel: JsonObject;
  @Column('varchar', { length: 64 }) project: string;
  @Column('varchar', { length: 64 }) user: string;
  @Column('varchar', { length: 64, nullable: true }) domain: string | null;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
}
