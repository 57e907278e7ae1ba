import type { WorkResultMessage } from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import {
  ActionEntity,
  ClusterPolicyEntity,
  inTransaction,
  markProcessedAndLockAction,
} from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import { defaultIds, type Evaluator } from '@trellis/decisions';
import type { EnginePlan } from '@trellis/decisions';
import { loadSnapshot, loadingFor, usingEveryNodeIfNeeded } from '@trellis/decisions';
import { finishAction } from './finish-action';
import { applyNodeUpdates } from '../actions/node-updates';
import type { DriftCoordinator } from '../drift/drift-coordinator';
import { recordLateResult } from '../deadline/deadline-supervisor';

export const ENGINE_RESULTS_CONSUMER = 'policy-engine.results';

/** Actions whose AFTER checks run (the scaling policy's post_op records last_op for its cooldown). */
const POST_OP_ACTIONS = new Set(['CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN', 'CLUSTER_RESIZE', 'CLUSTER_DEL_NODES']);

/**
 * Read with the action's lock (one round trip fewer): the plan alone (the decision's input, the
 * whole snapshot, and its trace are not needed here), written once when the action was decided;
 * and whether the cluster has an enabled binding for the AFTER chain to run, which only a policy
 * attach, detach or update action changes, and none runs beside this one (it would conflict).
 */
const DECIDED = {
  select: `(SELECT d.plan FROM decisions d WHERE d.action_id = a.id) AS decided_plan,
    EXISTS (SELECT 1 FROM cluster_policies b WHERE b.cluster_id = a.cluster_id AND b.enabled) AS decided_bound`,
};

interface Decided {
  /** null when the action has no decision */
  decided_plan: EnginePlan | null;
  decided_bound: boolean;
}

/** Ends an action with what the nova-worker reported, in one transaction with the outbox. */
export class ApplyWorkResultUseCase {
  constructor(
    private readonly dataSource: DataSource,
    private readonly evaluator: Evaluator,
    private readonly logger: Logger,
    /** results of drift steps (surveys, repair replacements) carry the step's id, not an action's */
    private readonly drift?: DriftCoordinator,
  ) {}

  async execute(result: WorkResultMessage): Promise<'finished' | 'duplicate' | 'already-final'> {
    const outcome = await inTransaction(this.dataSource, async (m) => {
      const { fresh, row: action, also } = await markProcessedAndLockAction(m, ENGINE_RESULTS_CONSUMER, result.message_id, result.action_id, DECIDED);
      if (!fresh) return 'duplicate' as const;
      if (!action && this.drift && (await this.drift.onStepResult(m, result, new Date()))) return 'finished' as const;
      if (!action) return 'already-final' as const;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(action.status)) {
        await recordLateResult(m, action, result);
        return 'already-final' as const;
      }
      const decided = also as unknown as Decided;
      if (decided.decided_plan === null) throw new Error(`action ${action.id} has a work result but no decision`);
      const plan = decided.decided_plan;
      const now = new Date();

      const outputs: Record<string, unknown> = {};
      const added = result.nodes.filter((n) => n.status === 'ACTIVE').map((n) => n.node_id);
      const removed = result.nodes.filter((n) => n.status === 'DELETED' || n.status === 'LEFT').map((n) => n.node_id);
      if (plan.create_nodes.length) outputs.nodes_added = added;
      if (plan.delete_nodes.length) outputs.nodes_removed = removed;

      // without an enabled binding no policy runs: the snapshot (two statements) is not read for nothing
      if (result.outcome === 'SUCCEEDED' && POST_OP_ACTIONS.has(action.action) && action.cluster_id && decided.decided_bound) {
        await this.postOp(m, action, now);
      }
      // each node whose server update succeeded stores its update, even when another node's failed
      await applyNodeUpdates(m, plan, new Set(result.nodes.filter((n) => n.status === 'ACTIVE').map((n) => n.node_id)), now);
      const cleanup = await this.drift?.cleanup.begin(m, action, plan, result, outputs, now);
      if (cleanup && cleanup.kind !== 'kept') return 'finished' as const;
      const note = cleanup?.kind === 'kept' && cleanup.note ? ` ${cleanup.note}` : '';
      const reason = result.outcome === 'SUCCEEDED' ? plan.success_reason : `${result.reason}${note}`;
      await finishAction(m, action, { status: result.outcome, reason, plan, now, outputs, groups: result.groups });
      return 'finished' as const;
    });
    this.logger.info('work result applied', { action_id: result.action_id, outcome: result.outcome, handled: outcome });
    return outcome;
  }

  /** the AFTER chain: policies' post_op (scaling sets its binding's last_op) */
  private async postOp(m: EntityManager, action: ActionEntity, now: Date): Promise<void> {
    // summarised where every bound policy's type decides on a summary (the built-in post_op hooks read no node)
    const loading = loadingFor(this.evaluator);
    const first = await loadSnapshot(m, action, 'post_op', now, loading);
    if (!first.policies.some((p) => p.enabled)) return;
    const { result: out } = await usingEveryNodeIfNeeded(
      m,
      action,
      first,
      now,
      (s) => this.evaluator.evaluate(s as never, { newId: () => defaultIds.uuid() }),
      loading,
    );
    for (const u of out.binding_updates ?? []) {
      await m
        .getRepository(ClusterPolicyEntity)
        .update({ id: u.binding_id }, { last_op: u.last_op ? new Date(u.last_op) : now });
    }
  }
}
