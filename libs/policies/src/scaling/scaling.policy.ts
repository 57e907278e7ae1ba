import { HookContext, InvalidSpecError, Policy, PolicyType, ValidateContext } from '../framework/policy';
import { PolicyAction, When } from '../framework/types';
import { ADJUSTMENT_TYPES, CHANGE_IN_CAPACITY, checkSizeParams } from '../resize/resize';
import { nodeCount } from '../framework/summary';
import { pyStr } from '../schema/py-format';
import { AllowedValues, Schema } from '../schema/schema';
import { inCooldown, positiveInt, scalingAdjustmentCount } from './plan';

export interface ScalingProperties {
  event: 'CLUSTER_SCALE_IN' | 'CLUSTER_SCALE_OUT';
  adjustment: { type: string; number: number; min_step: number; best_effort: boolean; cooldown: number } | null;
}

const DEFAULT_ADJUSTMENT = { type: CHANGE_IN_CAPACITY, number: 1, min_step: 1, best_effort: false, cooldown: 0 };

/** senlin.policy.scaling-1.0 (senlin-behaviour §7). Not a singleton: one per event is usual. */
@PolicyType({
  name: 'senlin.policy.scaling',
  versions: { '1.0': [{ status: 'SUPPORTED', since: '2016.04' }] },
  profileTypes: ['ANY'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_IN'],
    ['BEFORE', 'CLUSTER_SCALE_OUT'],
    ['AFTER', 'CLUSTER_SCALE_IN'],
    ['AFTER', 'CLUSTER_SCALE_OUT'],
  ],
  priority: 100,
  singleton: false,
  hooks: ['validate', 'pre_op', 'post_op', 'need_check'],
  bindingKey: 'ScalingPolicy',
  readsHypervisors: false,
  readsGroupMembers: false,
  properties: {
    event: Schema.String({
      description: 'Event that will trigger this policy. Must be one of CLUSTER_SCALE_IN and CLUSTER_SCALE_OUT.',
      constraints: [new AllowedValues(['CLUSTER_SCALE_IN', 'CLUSTER_SCALE_OUT'])],
      required: true,
    }),
    adjustment: Schema.Map({
      description: 'Detailed specification for scaling adjustments.',
      schema: {
        type: Schema.String({
          description: 'Type of adjustment when scaling is triggered.',
          constraints: [new AllowedValues(ADJUSTMENT_TYPES)],
          default: CHANGE_IN_CAPACITY,
        }),
        number: Schema.Number({ description: 'A number specifying the amount of adjustment.', default: 1 }),
        min_step: Schema.Integer({
          description:
            'When adjustment type is set to "CHANGE_IN_PERCENTAGE", this specifies the cluster size will be decreased by at least this number of nodes.',
          default: 1,
        }),
        best_effort: Schema.Boolean({
          description: 'Whether do best effort scaling when new size of cluster will break the size limitation',
          default: false,
        }),
        cooldown: Schema.Integer({
          description: 'Number of seconds to hold the cluster for cool-down before allowing cluster to be resized again.',
          default: 0,
        }),
      },
    }),
  },
})
export class ScalingPolicy extends Policy<ScalingProperties> {
  /** An omitted `adjustment` means its defaults (Senlin crashed on it). */
  get adjustment(): NonNullable<ScalingProperties['adjustment']> {
    return this.properties.adjustment ?? DEFAULT_ADJUSTMENT;
  }

  override validate(_ctx: ValidateContext): void {
    const a = this.adjustment;
    if (a.number <= 0) throw new InvalidSpecError("the 'number' for 'adjustment' must be > 0", 'properties.adjustment.number');
    if (a.min_step < 0) throw new InvalidSpecError("the 'min_step' for 'adjustment' must be >= 0", 'properties.adjustment.min_step');
    if (a.cooldown < 0) throw new InvalidSpecError("the 'cooldown' for 'adjustment' must be >= 0", 'properties.adjustment.cooldown');
  }

  /** BEFORE only for its own event; AFTER for both scale events (so any scaling restarts the cooldown). */
  override needCheck(when: When, action: PolicyAction): boolean {
    if (!super.needCheck(when, action)) return false;
    return when === 'AFTER' || action.action === this.properties.event;
  }

  override preOp(ctx: HookContext): string | void {
    const { action, cluster } = ctx;
    const data = action.data;
    const adjustment = this.adjustment;
    if (inCooldown(action.inputs.last_op as string | null | undefined, adjustment.cooldown, ctx.now)) {
      data.status = 'ERROR';
      data.reason = `Policy ${this.id} cooldown is still in progress.`;
      return;
    }
    const current = nodeCount(cluster);
    const raw = action.inputs.count ?? scalingAdjustmentCount(this.properties.event, adjustment, current);
    let count = positiveInt(raw);
    if (count === undefined) {
      data.status = 'ERROR';
      data.reason = `Invalid count (${pyStr(raw)}) for action '${action.action}'.`;
      return;
    }
    const maxSize = cluster.max_size === -1 ? ctx.maxNodesPerCluster : cluster.max_size;
    const scaleIn = action.action === 'CLUSTER_SCALE_IN';
    if (adjustment.best_effort) count = Math.min(count, scaleIn ? current - cluster.min_size : maxSize - current);
    const error = checkSizeParams(cluster, scaleIn ? current - count : current + count, null, null, !adjustment.best_effort, ctx.maxNodesPerCluster);
    if (error) {
      data.status = 'ERROR';
      data.reason = error;
      return;
    }
    data.status = 'OK';
    data.reason = 'Scaling request validated.';
    if (scaleIn) data.deletion = { count };
    else data.creation = { count };
    return `${scaleIn ? 'delete' : 'create'} ${count}`;
  }

  override postOp(ctx: HookContext): string | void {
    const stamp = new Date(ctx.now).toISOString();
    ctx.setLastOp(stamp);
    return `last_op = ${stamp}`;
  }
}
