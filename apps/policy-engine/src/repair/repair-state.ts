import type { Finding, RepairPlan } from '@trellis/decisions';

/** A node a repair replaced. */
export interface Replaced {
  old_node_id: string;
  old_name: string;
  node_id: string;
  name: string;
  host: string | null;
  zone: string | null;
}

/**
 * Where a check, repair or scaling action stands with drift, kept in the action's `outputs.drift`
 * (so a person sees it on the action, and the next step knows where to go on).
 */
export interface DriftState {
  findings: Finding[];
  repair?: RepairPlan;
  /** index into `stepsOf(repair)` of the step to run next */
  next?: number;
  /** ACTIVE nodes when the repair began: a replacement may not leave fewer (nor fewer than min_size) */
  active_at_start?: number;
  replaced?: Replaced[];
  /** repair (the `repair` action) or fail (a scaling action whose cluster config says so) */
  on_scale?: 'repair' | 'fail';
  /** CLUSTER_REPAIR: what the last look found after the repair */
  remaining?: Finding[];
}

export type RepairStep = { kind: 'groups' } | { kind: 'create' | 'delete'; replacement: number };

/** One replacement at a time: create the new node, then delete the old one. */
export function stepsOf(plan: RepairPlan): RepairStep[] {
  if (plan.replacements.length === 0) return plan.groups.length ? [{ kind: 'groups' }] : [];
  return plan.replacements.flatMap((_, i) => [
    { kind: 'create' as const, replacement: i },
    { kind: 'delete' as const, replacement: i },
  ]);
}

export const driftStateOf = (outputs: Record<string, unknown> | null | undefined): DriftState | null =>
  (outputs?.drift as DriftState | undefined) ?? null;
