import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonb, tstz, type JsonObject } from './columns';

/** The policy chain's decision for one action: a pure function of `input` (decision 17). */
@Entity('decisions')
export class DecisionEntity {
  @PrimaryColumn('uuid') action_id: string;
  @Column('varchar', { length: 16 }) hook: string;
  /** the snapshot: policies with binding data, cluster with nodes, Nova facts, the action */
  @Column(jsonb) input: JsonObject;
  /** {status, reason, data, ...} as the chain left it */
  @Column(jsonb) output: JsonObject;
  /** what the engine turned the output into: placements per new node, victims per zone, cloud changes */
  @Column(jsonb) plan: JsonObject;
  /** one entry per binding: ran or skipped and why, verdict, reason, action.data keys changed */
  @Column({ ...jsonb, default: [] }) trace: any[];
  @Column(tstz) created_at: Date;
}
