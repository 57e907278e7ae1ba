import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/**
 * One work order of an action that needs several in a row (a survey of the cloud before judging
 * drift, each replacement of a repair). The step's id is the `action_id` its work order carries,
 * so the nova-worker keeps one order per id and the engine finds the action a result belongs to.
 */
@Entity('action_steps')
@Index(['action_id'])
export class ActionStepEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid') action_id: string;
  @Column('int') seq: number;
  /** survey | create | delete */
  @Column('varchar', { length: 16 }) kind: string;
  /** RUNNING | DONE | FAILED | SUPERSEDED */
  @Column('varchar', { length: 16 }) status: string;
  @Column({ ...jsonb, default: {} }) detail: JsonObject;
  @Column(tstz) created_at: Date;
  @Column({ ...tstz, nullable: true }) finished_at: Date | null;
}
