import { Inject, Injectable } from '@nestjs/common';
import { tooManyRequests } from '@trellis/common';
import { ActiveActionStatuses } from '@trellis/contracts';
import type { EntityManager } from 'typeorm';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { RequestVia } from '../core/request.decorators';
import { hotQuery, sqlTextList } from '../infra/persistence.adapter';

/** When a refused action may be asked for again: actions on the simulator end within seconds, on a cloud within a minute. */
export const ACTION_LIMIT_RETRY_AFTER_SECONDS = 5;

/** Unfinished actions: the project's, and every project's (counted only when there is an overall limit) */
export interface UnfinishedCounts {
  project: number;
  overall: number;
}

/**
 * The unfinished statuses as an SQL list (`'READY', 'WAITING', ...`): written into the statements,
 * not passed as a parameter, so PostgreSQL plans a prepared statement that counts them once (with a
 * parameter it estimates a custom plan cheaper and plans the statement again on every request).
 */
export const UNFINISHED_STATUSES_SQL = sqlTextList(ActiveActionStatuses);

/** pg_advisory_xact_lock(class, key) classes: one lock per project (key: hash of its id), one for every project (key 0). */
const PROJECT_LOCK_CLASS = 0x54726c01;
const DEPLOYMENT_LOCK_CLASS = 0x54726c02;

/**
 * The limits on unfinished actions (READY, RUNNING, WAITING...): TRELLIS_MAX_ACTIONS_PER_PROJECT
 * for one project's REST requests (people), TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT for its
 * RPC requests and webhook triggers (services and alarms), TRELLIS_MAX_ACTIONS for all of them.
 * Each counts every unfinished action of the project, whatever asked for it. An action over a
 * limit is a 429 with `Retry-After`, and nothing of its request is stored.
 *
 * Alarms have a budget of their own because an alarm storm is the moment scaling matters most:
 * a monitoring system that fires one webhook per cluster must not lose half its alarms to a
 * limit sized for people clicking (docs/SECURITY.md, Limits).
 */
@Injectable()
export class ActionLimits {
  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {}

  /**
   * Refuses one more action of `project` when a limit is reached. With `lock`, the project's and
   * the deployment's transaction-scoped advisory locks are taken first (always in that order) in a
   * statement of their own, so the count sees every action committed before and holds until the
   * caller commits: gateways on one database cannot both take the last place. Without it, a cheap
   * early refusal before the request makes anything (a trust).
   */
  async check(manager: EntityManager, project: string, options: { lock: boolean; via: RequestVia }): Promise<void> {
    const counting = this.countSql(options.via, 1);
    if (counting === null) return;
    if (options.lock) await this.lock(manager, project, options.via);
    const [{ counted }]: Array<{ counted: UnfinishedCounts }> = await hotQuery(manager, `SELECT ${counting} AS counted`, [project]);
    this.judge(project, counted, options.via);
  }

  /**
   * `check`'s locks alone, in a statement of their own: a statement after it may carry the count
   * (`countSql`) instead of `check` reading it in another. Nothing when no limit applies.
   */
  async lock(manager: EntityManager, project: string, via: RequestVia): Promise<void> {
    const { maxActions: overall } = this.config;
    const perProject = this.perProject(via);
    const locks = [
      ...(perProject > 0 ? [`pg_advisory_xact_lock(${PROJECT_LOCK_CLASS}, hashtext($1))`] : []),
      ...(overall > 0 ? [`pg_advisory_xact_lock(${DEPLOYMENT_LOCK_CLASS}, 0)`] : []),
    ];
    if (locks.length) await hotQuery(manager, `SELECT ${locks.join(', ')}`, perProject > 0 ? [project] : []);
  }

  /**
   * The unlocked count of `check` as an expression another statement can carry (one round trip
   * instead of two), its value for `judge`: the project is parameter `$projectParam`. Null when no
   * limit applies.
   */
  countSql(via: RequestVia, projectParam: number): string | null {
    const overall = this.config.maxActions;
    if (this.perProject(via) === 0 && overall === 0) return null;
    const p = `$${projectParam}`;
    // every unfinished action when there is an overall limit (few: the limit bounds them), else the project's
    return `(SELECT json_build_object('project', count(*) FILTER (WHERE project = ${p}), 'overall', count(*))
       FROM actions WHERE status IN (${UNFINISHED_STATUSES_SQL})${overall > 0 ? '' : ` AND project = ${p}`})`;
  }

  /** Refuses one more action of `project` when the counts read by `countSql` reach a limit. */
  judge(project: string, counted: UnfinishedCounts, via: RequestVia): void {
    const overall = this.config.maxActions;
    const perProject = this.perProject(via);
    if (perProject > 0 && counted.project >= perProject) {
      throw tooManyRequests(
        `Project ${project} has ${counted.project} unfinished actions, the most it may have at once; try again when one has finished.`,
        ACTION_LIMIT_RETRY_AFTER_SECONDS,
        'ActionLimitExceeded',
      );
    }
    if (overall > 0 && counted.overall >= overall) {
      throw tooManyRequests(
        `Trellis has ${counted.overall} unfinished actions, the most it runs at once; try again later.`,
        ACTION_LIMIT_RETRY_AFTER_SECONDS,
        'ActionLimitExceeded',
      );
    }
  }

  private perProject(via: RequestVia): number {
    return via === 'rest' ? this.config.maxActionsPerProject : this.config.maxRpcWebhookActionsPerProject;
  }
}
