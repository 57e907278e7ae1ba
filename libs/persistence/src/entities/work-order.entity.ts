import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/** The nova-worker's record of one work order: what it applied and whether it reported back. */
@Entity('work_orders')
export class WorkOrderEntity {
  @PrimaryColumn('uuid') action_id: string;
  @Column('uuid', { nullable: true }) cluster_id: string | null;
  @Column(jsonb) payload: JsonObject;
  /** APPLYING → BUILDING → DONE */
  @Column('varchar', { length: 16 }) status: string;
  @Column('uuid', { nullable: true }) result_message_id: string | null;
  /** server group refs of the order → ids Nova gave them */
  @Column({ ...jsonb, default: {} }) groups: Record<string, string>;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) updated_at: Date | null;
  /** the worker applying the order now (null: nobody, or waiting for `next_attempt_at`) */
  @Column('varchar', { length: 128, nullable: true }) lease_owner: string | null;
  /** new for every claim: the holder's writes after its Nova calls name it, so a taken-over holder writes nothing */
  @Column('uuid', { nullable: true }) lease_token: string | null;
  @Column({ ...tstz, nullable: true }) lease_expires_at: Date | null;
  /** tries that ended in a transient cloud error */
  @Column('int', { default: 0 }) attempts: number;
  /** when an APPLYING order that met a transient cloud error is tried again */
  @Column({ ...tstz, nullable: true }) next_attempt_at: Date | null;
  @Column('text', { nullable: true }) last_error: string | null;
  /** an ops order's node operations completed before a transient error put it off: node id → outcome (migration 1796010000000) */
  @Column({ ...jsonb, nullable: true }) ops_done: Record<string, JsonObject> | null;
}

/**
 * One node operation of an ops order (migration 1796020000000): `{"requested": true}` once Nova
 * accepted its request, then its outcome once Nova completed it: a try that takes the order over
 * (its holder died, or met a transient error) reuses the outcomes, waits for the accepted
 * requests and asks Nova only for the nodes without a row. Deleted when the order finishes; retention
 * deletes any left beside a finished or forgotten order.
 */
@Entity('work_order_ops')
export class WorkOrderOpEntity {
  @PrimaryColumn('uuid') action_id: string;
  @PrimaryColumn('uuid') node_id: string;
  @Column(jsonb) outcome: JsonObject;
  @Column(tstz) done_at: Date;
}
