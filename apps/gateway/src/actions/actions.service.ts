import { Injectable } from '@nestjs/common';
import { badRequest, conflict } from '@trellis/common';
import { requireVersion } from '../core/api-version';
import { stringField, toBool } from '../shared/body';
import { ActionEntity, ClusterEntity } from '@trellis/persistence/entities';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { ACTION_NAME_FILTER, parseListQuery, runList, whereUuidIn } from '../shared/list-query';
import { ActionStatuses } from '@trellis/contracts';
import { HostVisibility } from '../shared/host-visibility';
import { lookup, mustFind } from '../shared/lookup';
import { actionView } from '../shared/views';
import { ActionSubmitter } from './action-submitter';
import { ActionUpdateBody, ReplayBody } from './action.shapes';

const LIST = {
  filters: ['name', 'cluster_id', 'target', 'action', 'status'],
  sortKeys: ['name', 'target', 'action', 'created_at', 'status'],
  enums: { action: ACTION_NAME_FILTER, status: ActionStatuses },
} as const;

/** Senlin's signal_cancel: the statuses an action can be cancelled in. */
const CANCELLABLE = ['INIT', 'WAITING', 'READY', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION'];

/** Only these can be stuck waiting for the engine; a finished action is never run twice. */
const REPLAYABLE = ['READY', 'RUNNING'];

@Injectable()
export class ActionsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly submitter: ActionSubmitter,
    private readonly hosts: HostVisibility,
  ) {}

  async list(req: ApiRequest, query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const manager = this.uow.manager;
    const qb = manager.getRepository(ActionEntity).createQueryBuilder('a');
    if (q.filters.cluster_id) {
      const ids: string[] = [];
      for (const identity of q.filters.cluster_id) {
        const cluster = await lookup(manager, ClusterEntity, identity, { project: q.globalProject ? null : req.caller.projectId });
        ids.push(cluster?.id ?? identity);
      }
      whereUuidIn(qb, 'cluster_id', ids, 'clusterIds');
    }
    if (q.filters.name) qb.andWhere('a.name IN (:...names)', { names: q.filters.name });
    if (q.filters.target) whereUuidIn(qb, 'target', q.filters.target, 'targets');
    if (q.filters.action) qb.andWhere('a.action IN (:...actions)', { actions: q.filters.action });
    if (q.filters.status) qb.andWhere('a.status IN (:...statuses)', { statuses: q.filters.status });
    const rows = await runList(qb, q, req.caller, [{ key: 'created_at', dir: 'ASC' }]);
    // a repair's outputs and reason name the hosts of the nodes it replaced
    const show = await this.hosts.forCaller(manager, req.caller);
    return { actions: rows.map((a) => show(actionView(a, req.version), a.project)) };
  }

  async get(req: ApiRequest, identity: string) {
    const action = await mustFind(this.uow.manager, ActionEntity, 'action', identity, { project: req.caller.projectId });
    const show = await this.hosts.forCaller(this.uow.manager, req.caller);
    return { action: show(actionView(action, req.version), action.project) };
  }

  /**
   * PATCH /v1/actions/{id} (≥1.12), `{"action": {"status": "CANCELLED"}}`: an action that has not
   * started ends CANCELLED here and now (the engine then finds it not READY and leaves it); a
   * RUNNING one is signalled to the engine, which ends it CANCELLED at once and whose worker makes
   * no further Nova call for it (servers already asked for stay recorded on their nodes).
   */
  async cancel(req: ApiRequest, identity: string, body: unknown, query: Record<string, unknown>): Promise<string> {
    requireVersion(req.version, '1.12');
    // Senlin coerces the status to text with the request (a map or a list is a 400 before any
    // lookup); whether it is one an action can be set to is judged once the action is found
    const status = stringField(ActionUpdateBody.open(body).status, 'status');
    if (query.force !== undefined) toBool(query.force);
    return this.uow.run(async (tx) => {
      const action = await mustFind(tx.manager, ActionEntity, 'action', identity, { project: req.caller.projectId });
      if (status !== 'CANCELLED') throw badRequest(`Unknown status ${status} for action ${identity}`);
      const [locked] = await tx.manager.query('SELECT status FROM actions WHERE id = $1 FOR UPDATE', [action.id]) as Array<{ status: string }>;
      if (!CANCELLABLE.includes(locked.status)) {
        const expected = `(${CANCELLABLE.map((s) => `'${s}'`).join(', ')})`;
        throw conflict(
          `Action (${action.id.slice(0, 8)}) is in status (${locked.status}) while expected status must be one of (${expected}).`,
          'ActionImmutable',
        );
      }
      if (locked.status === 'RUNNING') {
        action.status = locked.status;
        await this.submitter.announce(tx, action, req.requestId, 'cancel');
        return action.id;
      }
      const now = new Date();
      await tx.manager.getRepository(ActionEntity).update(
        { id: action.id },
        { status: 'CANCELLED', status_reason: 'Action execution cancelled', end_time: now.getTime() / 1000, updated_at: now },
      );
      return action.id;
    });
  }

  /**
   * Re-publishes an action the engine never picked up or lost (rule `actions:replay`, the cloud
   * admin's by default). The engine's claim and its processed-message inbox make a duplicate
   * harmless; a finished action is refused. Only a cloud admin reaches other projects' actions.
   */
  async replay(req: ApiRequest, identity: string, body: unknown) {
    ReplayBody.check(body);
    return this.uow.run(async (tx) => {
      const project = req.allows('cloud_admin') ? null : req.caller.projectId;
      const action = await mustFind(tx.manager, ActionEntity, 'action', identity, { project, byName: false });
      if (!REPLAYABLE.includes(action.status)) {
        throw conflict(
          `The action '${identity}' is in status ${action.status} and cannot be replayed; only READY or RUNNING actions can.`,
          'ActionInProgress',
        );
      }
      const messageId = await this.submitter.announce(tx, action, req.requestId, 'replay');
      return {
        id: action.id,
        body: { action: action.id, status: action.status, cause: 'replay', message_id: messageId, correlation_id: req.requestId },
      };
    });
  }
}
