import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '@trellis/common';
import { createEvaluator, decideAction, defaultIds, loadSnapshot, loadingFor, usingEveryNodeIfNeeded, type Evaluator } from '@trellis/decisions';
import { ActionEntity, DecisionEntity } from '@trellis/persistence/entities';
import { EvaluationInputError, evaluate, type PolicyRegistry } from '@trellis/policies';
import type { EntityManager } from 'typeorm';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import { POLICY_REGISTRY } from '../core/tokens';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { HostVisibility } from '../shared/host-visibility';
import { mustFind } from '../shared/lookup';
import { checkEvaluationRequest } from './evaluation-request';

export interface DraftAction {
  action: string;
  target: string;
  clusterId: string | null;
  inputs: Record<string, unknown>;
  timeout: number;
}

/**
 * Decisions made visible (decision 17): the stored record of an action's decision, a dry run of
 * an action that is never stored, and the evaluation of a snapshot someone brings.
 */
@Injectable()
export class DecisionsService {
  private readonly evaluator: Evaluator;

  constructor(
    private readonly uow: UnitOfWork,
    @Inject(POLICY_REGISTRY) private readonly registry: PolicyRegistry,
    private readonly hosts: HostVisibility,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    // a dry run decides as the engine would, under the deployment's max_nodes_per_cluster
    this.evaluator = createEvaluator(registry, { maxNodesPerCluster: config.maxNodesPerCluster });
  }

  async decisionOf(req: ApiRequest, identity: string) {
    const action = await mustFind(this.uow.manager, ActionEntity, 'action', identity, { project: req.caller.projectId });
    const d = await this.uow.manager.getRepository(DecisionEntity).findOneBy({ action_id: action.id });
    if (!d) throw notFound('decision of action', action.id);
    const show = await this.hosts.forCaller(this.uow.manager, req.caller);
    const decision = {
      action_id: d.action_id,
      hook: d.hook,
      created_at: d.created_at.toISOString(),
      input: d.input,
      output: d.output,
      plan: d.plan,
      trace: d.trace,
    };
    return { decision: show(decision, action.project) };
  }

  /**
   * What the engine would decide for this action now, from the same snapshot it would load, with
   * nothing stored and nothing sent to Nova.
   */
  async dryRun(manager: EntityManager, req: ApiRequest, draft: DraftAction) {
    const now = new Date();
    const action = manager.getRepository(ActionEntity).create({
      id: randomUUID(),
      name: 'dry_run',
      action: draft.action,
      target: draft.target,
      cluster_id: draft.clusterId,
      inputs: draft.inputs,
      data: {},
      timeout: draft.timeout,
      project: req.caller.projectId,
      user: req.caller.userId,
    });
    const loading = loadingFor(this.evaluator);
    const first = await loadSnapshot(manager, action, 'pre_op', now, loading);
    const { result: d } = await usingEveryNodeIfNeeded(manager, action, first, now, (s) => decideAction(action, s, this.evaluator, defaultIds), loading);
    const show = await this.hosts.forCaller(manager, req.caller);
    return show(
      {
        dry_run: true,
        action: { action: draft.action, target: draft.target, inputs: draft.inputs },
        decision: {
          status: d.failure ? 'FAILED' : 'OK',
          reason: d.failure ?? d.plan.success_reason,
          hook: d.hook,
          input: d.input,
          output: d.output,
          plan: d.plan,
          trace: d.trace,
        },
      },
      action.project,
    );
  }

  /**
   * POST /v1/evaluations: `trellis evaluate` over HTTP. Shown as computed, names and all: it is about
   * the snapshot the caller brought and reads nothing stored.
   */
  evaluate(body: unknown) {
    const input = checkEvaluationRequest(body);
    try {
      // a dry-run decides at the time its snapshot names, else now
      return evaluate(input, { registry: this.registry, now: input.now ?? Date.now() });
    } catch (e) {
      if (e instanceof EvaluationInputError) throw badRequest(e.message);
      throw e;
    }
  }
}
