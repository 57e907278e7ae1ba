import type { WorkResultMessage } from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import {
  decideAction,
  defaultIds,
  detectClusterDrift,
  driftBindings,
  emptyPlan,
  everyTypeIn,
  loadBindings,
  loadSnapshot,
  loadingFor,
  planRepair,
  usingEveryNodeIfNeeded,
  repairIsEmpty,
  type Evaluator,
  type Finding,
  type IdSource,
  type LoadOptions,
  type Snapshot,
  type SnapshotPolicy,
} from '@trellis/decisions';
import { ActionEntity, ActionStepEntity, ClusterEntity, NodeEntity } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';
import type { RunActionResult } from '../actions/run-action-result';
import { storeDecision } from '../actions/store-decision';
import { finishAction } from '../results/finish-action';
import { FailedScaleOutCleanup } from '../results/failed-scale-out-cleanup';
import { RepairRunner, nextSeq } from '../repair/repair-runner';
import { driftStateOf, type DriftState } from '../repair/repair-state';
import { SURVEY_ORDER, emitStep, resendStep } from '../repair/step-orders';
import { recordFindings, resolveFindings } from './findings.store';
import { writeActionState } from '../actions/action-rows';
import type { WorkOrderVersionSource } from '../actions/work-order-versions';

export interface DriftCoordinatorOptions {
  instanceId: string;
  leaseSeconds: number;
  buildTimeoutSeconds: number;
  /** the schema_version the nova-workers that are up take (default: this release's) */
  workOrderVersions?: WorkOrderVersionSource;
}

/** Decides and orders an action the usual way, once drift has been dealt with. */
/** `loaded`: a pre_op snapshot read in this transaction with nothing changed since, decided on as it is */
export type Proceed = (m: EntityManager, action: ActionEntity, correlationId: string, loaded?: { snapshot: Snapshot; now: Date }) => Promise<RunActionResult>;

/** The cluster config key that says what a growing action does when it meets a vanished group. */
export const ON_SCALE_KEY = 'drift.on_scale';
const ON_SCALE_MODES = ['repair', 'fail'] as const;

const SCALING = new Set(['CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN', 'CLUSTER_RESIZE']);
const GROWING = new Set(['CLUSTER_SCALE_OUT', 'CLUSTER_RESIZE']);
const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
const BUSY: Record<string, string> = { CLUSTER_CHECK: 'CHECKING', CLUSTER_REPAIR: 'RECOVERING' };

/**
 * Drift between the cloud and a cluster's policies (issue 6). The engine never calls Nova, so before
 * it judges it asks the nova-worker to look again (a survey: an order that changes nothing), then
 * compares what the worker recorded with the policies, stores the findings and, for a repair or a
 * growing action that meets a vanished group, runs the repair one work order at a time. Ordinary
 * actions (no role anti-affinity policy, no check or repair) keep their four messages.
 */
export class DriftCoordinator {
  private proceed: Proceed | null = null;
  private readonly repair: RepairRunner;
  /** a failed scale-out removing its ERROR nodes: a step of its own, routed here like drift's */
  readonly cleanup: FailedScaleOutCleanup;

  constructor(
    private readonly evaluator: Evaluator,
    private readonly logger: Logger,
    private readonly options: DriftCoordinatorOptions,
    private readonly ids: IdSource = defaultIds,
  ) {
    const { buildTimeoutSeconds, leaseSeconds, workOrderVersions } = options;
    this.repair = new RepairRunner({ buildTimeoutSeconds, workOrderVersions });
    this.cleanup = new FailedScaleOutCleanup({ buildTimeoutSeconds, leaseSeconds, workOrderVersions });
  }

  /** snapshots as the engine reads them (its policy types' lists: hypervisors, summaries) */
  private loading(): LoadOptions {
    return loadingFor(this.evaluator);
  }

  bindProceed(proceed: Proceed): void {
    this.proceed = proceed;
  }

  /**
   * A READY action about to be decided. Check and repair of a cluster with a drift-aware policy,
   * and scaling of one with role anti-affinity, first survey the cloud; null lets the engine decide
   * at once.
   */
  async beforeDecide(
    m: EntityManager,
    action: ActionEntity,
    correlationId: string,
    now: Date,
    /** the cluster's bindings, when the caller has read them already */
    bindings?: SnapshotPolicy[],
  ): Promise<RunActionResult | null> {
    if (!action.cluster_id) return null;
    const judging = action.action === 'CLUSTER_CHECK' || action.action === 'CLUSTER_REPAIR';
    if (!judging && !SCALING.has(action.action)) return null;
    const aware = driftBindings(bindings ?? (await loadBindings(m, action.cluster_id)), this.evaluator);
    if (!aware.length) return null;
    // Zone placement alone is judged inside the decision, on the zones the nodes recorded; server
    // groups and hosts change behind Trellis's back, so a type whose drift reads them (role
    // anti-affinity) needs a fresh look.
    if (!judging && !aware.some((p) => this.readsCloud(p))) return null;

    action.status = 'RUNNING';
    action.start_time = now.getTime() / 1000;
    action.owner = this.options.instanceId;
    action.lease_owner = this.options.instanceId;
    action.attempts += 1;
    action.status_reason = 'Looking at the cloud again before judging drift.';
    action.updated_at = now;
    const busy = BUSY[action.action] ?? 'RESIZING';
    await m.getRepository(ClusterEntity).update({ id: action.cluster_id }, { status: busy, status_reason: `${action.action} in progress`, updated_at: now });
    await this.survey(m, action, 'before', correlationId, now);
    return { kind: 'ordered', creates: 0, deletes: 0 };
  }

  /**
   * In the decision of a scaling action that did not survey (zone placement only): what the stored
   * facts show, recorded in the same transaction, so no message or commit is added.
   */
  async observe(m: EntityManager, action: ActionEntity, snapshot: Snapshot, now: Date): Promise<void> {
    if (!SCALING.has(action.action) || !action.cluster_id || !snapshot.cluster) return;
    if (driftStateOf(action.outputs)) return;
    if (!driftBindings(snapshot.policies, this.evaluator).length) return;
    const { result: findings } = await usingEveryNodeIfNeeded(m, action, snapshot, now, (s) => detectClusterDrift(s, this.evaluator), this.loading());
    await recordFindings(m, action, findings, now);
  }

  /** A RUNNING action sent again (resume, replay): its step in flight is ordered once more. */
  async resume(m: EntityManager, action: ActionEntity, now: Date): Promise<RunActionResult | null> {
    const step = await m.getRepository(ActionStepEntity).findOne({ where: { action_id: action.id, status: 'RUNNING' }, order: { seq: 'DESC' } });
    if (!step) return null;
    await resendStep(m, step, now, this.options.workOrderVersions?.current);
    action.lease_expires_at = this.leaseFor(step.kind, now);
    action.updated_at = now;
    await writeActionState(m, action);
    return { kind: 'reordered' };
  }

  /** A work result whose `action_id` is a step's. False: not a step (nothing of drift's). */
  async onStepResult(m: EntityManager, result: WorkResultMessage, now: Date): Promise<boolean> {
    const step = await m
      .getRepository(ActionStepEntity)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .where('s.id = :id', { id: result.action_id })
      .getOne();
    if (!step) return false;
    // a second result for a step already handled (a survey sent again on resume)
    if (step.status !== 'RUNNING') return true;
    const action = await m
      .getRepository(ActionEntity)
      .createQueryBuilder('a')
      .setLock('pessimistic_write')
      .where('a.id = :id', { id: step.action_id })
      .getOne();
    const done = result.outcome === 'SUCCEEDED' ? 'DONE' : 'FAILED';
    if (!action || FINAL.includes(action.status)) {
      await m.getRepository(ActionStepEntity).update({ id: step.id }, { status: 'SUPERSEDED', finished_at: now });
      return true;
    }
    await m.getRepository(ActionStepEntity).update({ id: step.id }, { status: done, finished_at: now });
    if (step.kind === 'cleanup') {
      await this.cleanup.onResult(m, action, step, result, now);
      this.logger.info('cleanup step handled', { action_id: action.id, step_id: step.id, outcome: result.outcome });
      return true;
    }
    const state: DriftState = driftStateOf(action.outputs) ?? { findings: [] };
    const log = this.logger.child({ action_id: action.id, step_id: step.id });
    if (step.kind === 'survey') {
      await this.afterSurvey(m, action, step, state, result, now);
    } else {
      const outcome = await this.repair.onResult(m, action, step, state, result, now);
      if (outcome === 'continue') await this.advance(m, action, state, result.correlation_id, now);
      else await this.finish(m, action, state, 'FAILED', outcome.failed, now);
    }
    log.info('drift step handled', { kind: step.kind, outcome: result.outcome, action_status: action.status });
    return true;
  }

  private async afterSurvey(m: EntityManager, action: ActionEntity, step: ActionStepEntity, state: DriftState, result: WorkResultMessage, now: Date) {
    if (result.outcome !== 'SUCCEEDED') {
      return this.finish(m, action, state, 'FAILED', `The nova-worker could not look at the cloud: ${result.reason}`, now);
    }
    // judged on every node (drift findings name them) and on the groups' members
    const snapshot = await loadSnapshot(m, action, 'pre_op', now, { ...this.loading(), everyNode: true, groupMembers: true });
    const verifying = step.detail.phase === 'verify';

    if (action.action === 'CLUSTER_CHECK' || (action.action === 'CLUSTER_REPAIR' && !verifying)) {
      const decision = decideAction(action, snapshot, this.evaluator, this.ids);
      await storeDecision(m, action, decision, now);
      state.findings = decision.plan.findings ?? [];
      await recordFindings(m, action, state.findings, now);
      if (action.action === 'CLUSTER_CHECK' || !decision.plan.repair || repairIsEmpty(decision.plan.repair)) {
        return this.finish(m, action, state, 'SUCCEEDED', decision.plan.success_reason, now);
      }
      return this.beginRepair(m, action, state, decision.plan.repair, result.correlation_id, now);
    }

    const findings = detectClusterDrift(snapshot, this.evaluator);
    await recordFindings(m, action, findings, now);
    if (verifying) {
      const plan = state.repair!;
      const done = `${plan.groups.length} server group(s) created again, ${state.replaced?.length ?? 0} node(s) replaced`;
      state.remaining = findings;
      if (!findings.length) return this.finish(m, action, state, 'SUCCEEDED', `Cluster repair completed: ${done}; the cloud matches the policies.`, now);
      return this.finish(m, action, state, 'FAILED', `Cluster repair carried out (${done}), but ${findings.length} finding(s) remain: ${messages(findings)}`, now);
    }

    // a scaling action
    state.findings = findings;
    const ungrouped = findings.filter((f) => f.kind === 'group_missing' || f.kind === 'role_node_ungrouped');
    // Nothing to repair: decided on the snapshot just read (every node), where the chain needs every
    // node anyway; where each bound policy decides on a summary, read summarised (smaller, and stored).
    if (!ungrouped.length || !GROWING.has(action.action)) {
      const summarised = everyTypeIn(snapshot.policies, this.evaluator.summarisedTypes);
      return this.goOn(m, action, state, result.correlation_id, summarised ? undefined : { snapshot, now });
    }
    const cluster = await m.getRepository(ClusterEntity).findOneByOrFail({ id: action.cluster_id! });
    const mode = onScaleMode(cluster.config);
    if (typeof mode !== 'string') return this.finish(m, action, state, 'FAILED', `${vanishedText(ungrouped)} ${mode.error}`, now);
    state.on_scale = mode;
    if (mode === 'fail') {
      return this.finish(
        m,
        action,
        state,
        'FAILED',
        `${vanishedText(ungrouped)} The cluster's config '${ON_SCALE_KEY}' is 'fail', so ${action.action} was not run: ` +
          `run the cluster action 'repair' to create the group again and move its nodes into it, or set '${ON_SCALE_KEY}' to 'repair'.`,
        now,
      );
    }
    const repair = planRepair(snapshot, findings, this.ids, 'groups', this.evaluator);
    if (repairIsEmpty(repair)) return this.goOn(m, action, state, result.correlation_id);
    return this.beginRepair(m, action, state, repair, result.correlation_id, now);
  }

  private async beginRepair(m: EntityManager, action: ActionEntity, state: DriftState, repair: NonNullable<DriftState['repair']>, correlationId: string, now: Date) {
    state.repair = repair;
    state.next = 0;
    state.replaced = [];
    state.active_at_start = await m.getRepository(NodeEntity).countBy({ cluster_id: action.cluster_id!, status: 'ACTIVE' });
    return this.advance(m, action, state, correlationId, now);
  }

  /** The next repair step, or what follows the last one: a last look (repair), or the scaling itself. */
  /** Whether a binding's drift check reads cloud facts; a spec that no longer resolves is looked at again, to report it. */
  private readsCloud(policy: SnapshotPolicy): boolean {
    try {
      return this.evaluator.driftPolicy(policy).driftReadsCloud;
    } catch {
      return true;
    }
  }

  private async advance(m: EntityManager, action: ActionEntity, state: DriftState, correlationId: string, now: Date): Promise<void> {
    const sent = await this.repair.next(m, action, state, correlationId, now);
    if (sent === 'sent') {
      action.outputs = { ...(action.outputs ?? {}), drift: state };
      action.lease_expires_at = this.leaseFor('create', now);
      action.updated_at = now;
      await writeActionState(m, action);
      return;
    }
    if (sent !== 'done') return this.finish(m, action, state, 'FAILED', sent.failed, now);
    if (action.action === 'CLUSTER_REPAIR') {
      action.outputs = { ...(action.outputs ?? {}), drift: state };
      action.status_reason = 'Repair steps done; looking at the cloud again.';
      await writeActionState(m, action);
      return this.survey(m, action, 'verify', correlationId, now);
    }
    await resolveFindings(m, action, state.repair!.findings, now);
    return this.goOn(m, action, state, correlationId);
  }

  private async goOn(
    m: EntityManager,
    action: ActionEntity,
    state: DriftState,
    correlationId: string,
    loaded?: { snapshot: Snapshot; now: Date },
  ): Promise<void> {
    if (!this.proceed) throw new Error('DriftCoordinator used before bindProceed');
    action.outputs = { ...(action.outputs ?? {}), drift: state };
    await this.proceed(m, action, correlationId, loaded);
  }

  private async survey(m: EntityManager, action: ActionEntity, phase: 'before' | 'verify', correlationId: string, now: Date): Promise<void> {
    const seq = await nextSeq(m, action.id);
    await emitStep(m, action, { kind: 'survey', seq, detail: { phase } }, SURVEY_ORDER, {
      correlationId,
      buildTimeoutSeconds: this.options.buildTimeoutSeconds,
      now,
      version: this.options.workOrderVersions?.current,
    });
    action.lease_expires_at = this.leaseFor('survey', now);
    await writeActionState(m, action);
  }

  private async finish(m: EntityManager, action: ActionEntity, state: DriftState, status: 'SUCCEEDED' | 'FAILED', reason: string, now: Date) {
    await finishAction(m, action, { status, reason, plan: emptyPlan(), now, outputs: { drift: state } });
  }

  /** A survey takes seconds; a build may take the whole build timeout before its result comes. */
  private leaseFor(kind: string, now: Date): Date {
    const seconds = kind === 'survey' ? this.options.leaseSeconds : this.options.buildTimeoutSeconds + this.options.leaseSeconds;
    return new Date(now.getTime() + seconds * 1000);
  }
}

/** `config['drift.on_scale']`: repair (the default) or fail; anything else is named in the reason. */
export function onScaleMode(config: Record<string, unknown> | null | undefined): 'repair' | 'fail' | { error: string } {
  const value = config?.[ON_SCALE_KEY];
  if (value === undefined || value === null) return 'repair';
  if (ON_SCALE_MODES.includes(value as never)) return value as 'repair' | 'fail';
  return { error: `The cluster's config '${ON_SCALE_KEY}' must be 'repair' or 'fail', not ${JSON.stringify(value)}.` };
}

function vanishedText(found: Finding[]): string {
  return found
    .map((f) =>
      f.kind === 'group_missing'
        ? `The server group ${f.group_name ? `'${f.group_name}' (${f.group_id})` : `'${f.group_id}'`} of policy '${f.policy_name}' no longer exists in Nova.`
        : f.message,
    )
    .join(' ');
}

function messages(findings: Finding[]): string {
  return findings.map((f) => f.message).join(' ');
}
