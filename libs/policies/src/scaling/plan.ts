import { CHANGE_IN_CAPACITY, EXACT_CAPACITY } from '../resize/resize';
import { parseTimestamp } from '../resize/victims';
import { pyInt } from '../schema/schema';

export interface ScalingAdjustment {
  type: string;
  number: number;
  min_step: number;
}

/**
 * Senlin's `_calculate_adjustment_count` (senlin-behaviour §7 step 2): percentages truncate toward
 * zero (Python `int()`), then are raised to min_step; unlike the resize parser.
 */
export function scalingAdjustmentCount(event: string, adjustment: ScalingAdjustment, current: number): number {
  if (adjustment.type === EXACT_CAPACITY) {
    return event === 'CLUSTER_SCALE_IN' ? current - adjustment.number : adjustment.number - current;
  }
  if (adjustment.type === CHANGE_IN_CAPACITY) return adjustment.number;
  const count = Math.trunc((adjustment.number * current) / 100.0);
  return count < adjustment.min_step ? adjustment.min_step : count;
}

/** Senlin's utils.get_positive_int: Python `int()` of the value, if it is > 0. */
export function positiveInt(value: unknown): number | undefined {
  const n = pyInt(value);
  return n !== undefined && n > 0 ? n : undefined;
}

/**
 * Whether the cooldown still holds (Senlin: `not timeutils.is_older_than(last_op, cooldown)`):
 * true while at most `cooldown` seconds have passed since last_op.
 */
export function inCooldown(lastOp: string | null | undefined, cooldownSeconds: number, now: number): boolean {
  if (!lastOp) return false;
  const t = parseTimestamp(lastOp);
  if (Number.isNaN(t)) return false;
  return now - t <= cooldownSeconds * 1000;
}
