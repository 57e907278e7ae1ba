import { Injectable } from '@nestjs/common';
import { badRequest } from '@trellis/common';
import { ClusterEntity, ClusterFindingEntity } from '@trellis/persistence/entities';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { HostVisibility } from '../shared/host-visibility';
import { mustFind } from '../shared/lookup';
import { list, map, nullable, oneOf, str, time, uuid, view, type OutOf } from '../shapes/response';

const STATUSES = ['OPEN', 'RESOLVED', 'all'];
const NULLABLE_STRING = nullable(str());

export const FindingView = view('FindingView', {
  id: uuid(),
  cluster_id: uuid(),
  kind: str(),
  status: oneOf(['OPEN', 'RESOLVED']),
  policy_id: NULLABLE_STRING,
  group_id: NULLABLE_STRING,
  host: NULLABLE_STRING,
  node_ids: list(str()),
  message: str(),
  detail: nullable(map()),
  found_by: NULLABLE_STRING,
  found_at: time(),
  last_seen_at: time(),
  resolved_by: NULLABLE_STRING,
  resolved_at: time(),
});

export const FindingList = view('FindingList', {
  cluster_id: uuid(),
  checked_at: time({ description: 'When the last drift check ran.' }),
  findings: list(FindingView),
});

@Injectable()
export class FindingsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hosts: HostVisibility,
  ) {}

  async list(req: ApiRequest, identity: string, query: Record<string, unknown>): Promise<OutOf<typeof FindingList>> {
    const unknown = Object.keys(query).filter((k) => k !== 'status');
    if (unknown.length) throw badRequest(`Invalid query parameter(s) for findings: ${unknown.join(', ')}; only 'status' is accepted.`);
    const status = query.status === undefined ? 'OPEN' : query.status;
    if (typeof status !== 'string' || !STATUSES.includes(status)) {
      throw badRequest(`Invalid value ${JSON.stringify(status)} specified for 'status': one of ${STATUSES.join(', ')}.`);
    }
    const manager = this.uow.manager;
    const cluster = await mustFind(manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
    const rows = await manager.getRepository(ClusterFindingEntity).find({
      where: status === 'all' ? { cluster_id: cluster.id } : { cluster_id: cluster.id, status },
      order: { found_at: 'ASC', id: 'ASC' },
    });
    const show = await this.hosts.forCaller(manager, req.caller);
    return {
      cluster_id: cluster.id,
      checked_at: (cluster.data?.drift as { checked_at?: string } | undefined)?.checked_at ?? null,
      findings: rows.map((f) => show(findingView(f), f.project)),
    };
  }
}

export function findingView(f: ClusterFindingEntity): OutOf<typeof FindingView> {
  return {
    id: f.id,
    cluster_id: f.cluster_id,
    kind: f.kind,
    status: f.status,
    policy_id: f.policy_id,
    group_id: f.group_id,
    host: f.host,
    node_ids: f.node_ids,
    message: f.message,
    detail: f.detail,
    found_by: f.found_by,
    found_at: f.found_at.toISOString(),
    last_seen_at: f.last_seen_at.toISOString(),
    resolved_by: f.resolved_by,
    resolved_at: f.resolved_at ? f.resolved_at.toISOString() : null,
  };
}
