import { ClusterEntity, ClusterPolicyEntity, NodeEntity, ProfileEntity } from '@trellis/persistence/entities';
import { In, type EntityManager } from 'typeorm';
import { clusterView } from '../shared/views';

/** Cluster responses with their profile name, node ids and binding ids, loaded in three queries. */
export async function clusterViews(manager: EntityManager, clusters: ClusterEntity[]) {
  if (clusters.length === 0) return [];
  const ids = clusters.map((c) => c.id);
  // One after the other: inside a transaction they share one connection.
  const nodes = await manager.getRepository(NodeEntity).find({
    select: { id: true, cluster_id: true, index: true },
    where: { cluster_id: In(ids) },
    order: { index: 'ASC', id: 'ASC' },
  });
  const bindings = await manager.getRepository(ClusterPolicyEntity).find({
    select: { id: true, cluster_id: true },
    where: { cluster_id: In(ids) },
    order: { priority: 'ASC', attached_at: 'ASC', id: 'ASC' },
  });
  const profiles = await manager.getRepository(ProfileEntity).find({
    select: { id: true, name: true },
    where: { id: In([...new Set(clusters.map((c) => c.profile_id))]) },
  });
  const profileName = new Map(profiles.map((p) => [p.id, p.name]));
  return clusters.map((c) =>
    clusterView(c, {
      profileName: profileName.get(c.profile_id) ?? null,
      nodeIds: nodes.filter((n) => n.cluster_id === c.id).map((n) => n.id),
      bindingIds: bindings.filter((b) => b.cluster_id === c.id).map((b) => b.id),
    }),
  );
}

export async function clusterViewOf(manager: EntityManager, cluster: ClusterEntity) {
  const [view] = await clusterViews(manager, [cluster]);
  return view;
}
