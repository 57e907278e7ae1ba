import { Injectable } from '@nestjs/common';
import { badRequest } from '@trellis/common';
import { ClusterEntity, NodeEntity, ProfileEntity } from '@trellis/persistence/entities';
import { In } from 'typeorm';
import { requireVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { HostVisibility } from '../shared/host-visibility';
import { mustFind } from '../shared/lookup';
import { nodeView, recordedServerDetails } from '../shared/views';
import { parseAttributePath } from './attribute-path';
import { list, uuid, value, view, type OutOf } from '../shapes/response';

const ClusterAttribute = view('ClusterAttribute', {
  id: uuid({ description: 'The node.' }),
  value: value({ description: 'What the path selects in the node (its first match).', example: 'node-1' }),
});
export const ClusterAttributes = view('ClusterAttributes', { cluster_attributes: list(ClusterAttribute) });

/**
 * `GET /v1/clusters/{id}/attrs/{path}` (>= 1.2, Senlin's cluster_collect): the value the path
 * selects in each member node, as the node is shown (hosts hidden from non-admins), for the nodes
 * where it selects something. `details.*` reads what Trellis recorded about the node's server
 * (the gateway never calls Nova), present for nodes that have a server.
 */
@Injectable()
export class ClusterCollectService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hosts: HostVisibility,
  ) {}

  async collect(req: ApiRequest, identity: string, rawPath: string): Promise<OutOf<typeof ClusterAttributes>> {
    requireVersion(req.version, '1.2');
    const path = rawPath.trim();
    if (path === '' || path === 'None') throw badRequest('Required path attribute is missing.', 'HTTPBadRequest');
    const parser = parseAttributePath(path);
    const manager = this.uow.manager;
    const cluster = await mustFind(manager, ClusterEntity, 'cluster', identity, { project: req.caller.projectId });
    const nodes = await manager.getRepository(NodeEntity).find({ where: { cluster_id: cluster.id }, order: { index: 'ASC', id: 'ASC' } });
    const profileIds = [...new Set(nodes.map((n) => n.profile_id))];
    const profiles = profileIds.length ? await manager.getRepository(ProfileEntity).findBy({ id: In(profileIds) }) : [];
    const names = new Map(profiles.map((p) => [p.id, p.name]));
    const show = await this.hosts.forCaller(manager, req.caller);
    const attrs: Array<{ id: string; value: unknown }> = [];
    for (const node of nodes) {
      const view = nodeView(node, names.get(node.profile_id) ?? null, req.version);
      if (node.physical_id && path.includes('details')) view.details = recordedServerDetails(node);
      const matches = parser.find(show(view, node.project));
      if (matches.length) attrs.push({ id: node.id, value: matches[0] });
    }
    return { cluster_attributes: attrs };
  }
}
