import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz } from './columns';

/**
 * A Keystone trust from a user to Trellis's service user, for one project (Senlin's `credential`
 * table). Only the trust's id is kept: never a password or a token. The nova-worker acts in that
 * project's Nova with a token scoped to this trust.
 */
@Entity('trusts')
export class TrustEntity {
  /** the trustor */
  @PrimaryColumn('varchar', { length: 64 }) user_id: string;
  @PrimaryColumn('varchar', { length: 64 }) project_id: string;
  @Index()
  @Column('varchar', { length: 64 })
  trust_id: string;
  /** Trellis's service user when the trust was made */
  @Column('varchar', { length: 64 }) trustee_user_id: string;
  /** role names delegated */
  @Column(jsonb) roles: string[];
  @Column(tstz) created_at: Date;
  /** when the gateway last saw the trust in Keystone */
  @Column(tstz) verified_at: Date;
}
