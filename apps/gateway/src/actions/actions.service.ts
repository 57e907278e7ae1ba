import { Injectable } from '@nestjs/common';
import { badRequest, conflict } from '@trellis/common';
import { ActionEntity, ClusterEntity } from '@trellis/persistence/entities';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { parseListQuery, runList } from '../shared/list-query';
import { HostVisibility } from '../shared/host-visibility';
import { lookup, mustFind } from '../shared/lookup';
import { actionView } from '../shared/views';
import { ActionSubmitter } from './action-submitter';

const LIST = {
  filters: ['name', 'cluster_id', 'target', 'action', 'status'],
  sortKeys: ['name', 'target', 'action', 'created_at', 'status'],
} as const;

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
      qb.andWhere('CAST(a.cluster_id AS text) IN (:...clusterIds)', { clusterIds: ids });
    }
    if (q.filters.name) qb.andWhere('a.name IN (:...names)', { names: q.filters.name });
    if (q.filters.target) qb.andWhere('CAST(a.target AS text) IN (:...targets)', { targets: q.filters.target });
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
   * Re-publishes an action the engine never picked up or lost (rule `actions:replay`, the cloud
   * admin's by default). The engine's claim and its processed-message inbox make a duplicate
   * harmless; a finished action is refused. Only a cloud admin reaches other projects' actions.
   */
  async replay(req: ApiRequest, identity: string, body: unknown) {
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length)) {
      throw badRequest('The replay request takes no body.');
    }
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
