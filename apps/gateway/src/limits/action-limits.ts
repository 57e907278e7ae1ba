import { Inject, Injectable } from '@nestjs/common';
import { tooManyRequests } from '@trellis/common';
import { ActiveActionStatuses } from '@trellis/contracts';
import type { EntityManager } from 'typeorm';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';

/** When a refused action may be asked for again: actions on the simulator end within seconds, on a cloud within a minute. */
export const ACTION_LIMIT_RETRY_AFTER_SECONDS = 5;

/** pg_advisory_xact_lock(class, key) classes: one lock per project (key: hash of its id), one for every project (key 0). */
const PROJECT_LOCK_CLASS = 0x54726c01;
const DEPLOYMENT_LOCK_CLASS = 0x54726c02;

/**
 * The limits on unfinished actions (READY, RUNNING, WAITING...): TRELLIS_MAX_ACTIONS_PER_PROJECT
 * for one project, TRELLIS_MAX_ACTIONS for all of them. An action over a limit is a 429 with
 * `Retry-After`, and nothing of its request is stored.
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
  async check(manager: EntityManager, project: string, options: { lock: boolean }): Promise<void> {
    const { maxActionsPerProject: perProject, maxActions: overall } = this.config;
    if (perProject === 0 && overall === 0) return;
    if (options.lock) {
      const locks = [
        ...(perProject > 0 ? [`pg_advisory_xact_lock(${PROJECT_LOCK_CLASS}, hashtext($1))`] : []),
        ...(overall > 0 ? [`pg_advisory_xact_lock(${DEPLOYMENT_LOCK_CLASS}, 0)`] : []),
      ];
      await manager.query(`SELECT ${locks.join(', ')}`, perProject > 0 ? [project] : []);
    }
    // every unfinished action when there is an overall limit (few: the limit bounds them), else the project's
    const [counted]: Array<{ project: number; overall: number }> = await manager.query(
      `SELECT count(*) FILTER (WHERE project = $1)::int AS project, count(*)::int AS overall
         FROM actions WHERE status = ANY($2)${overall > 0 ? '' : ' AND project = $1'}`,
      [project, ActiveActionStatuses],
    );
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
}
