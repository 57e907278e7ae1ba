import { ClusterEntity, ProfileEntity } from '@trellis/persistence/entities';
import { In, type EntityManager } from 'typeorm';
import { clusterView } from '../shared/views';

/**
 * Cluster responses with their profile name, node ids and binding ids, loaded in three queries.
 * Ids come grouped per cluster from PostgreSQL (array_agg): a list of 1,000 clusters of 100 nodes
 * reads 1,000 rows, not 100,000 node entities.
 */
export async function clusterViews(manager: EntityManager, clusters: ClusterEntity[]) {
  if (clusters.length === 0) return [];
  const ids = clusters.map((c) => c.id);
  // One after the other: inside a transaction they share one connection.
  const nodeIds = await idsByCluster(
    manager,
    `SELECT cluster_id, array_agg(id::text ORDER BY index, id) AS ids FROM nodes WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`,
    ids,
  );
  const bindingIds = await idsByCluster(
    manager,
    `SELECT cluster_id, array_agg(id::text ORDER BY priority, attached_at, id) AS ids FROM cluster_policies WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`,
    ids,
  );
  const profiles = await manager.getRepository(ProfileEntity).find({
    select: { id: true, name: true },
    where: { id: In([...new Set(clusters.map((c) => c.profile_id))]) },
  });
  const profileName = new Map(profiles.map((p) => [p.id, p.name]));
  return clusters.map((c) =>
    clusterView(c, {
      profileName: profileName.get(c.profile_id) ?? null,
      nodeIds: nodeIds.get(c.id) ?? [],
      bindingIds: bindingIds.get(c.id) ?? [],
    }),
  );
}

async function idsByCluster(manager: EntityManager, sql: string, clusterIds: string[]): Promise<Map<string, string[]>> {
  const rows: Array<{ cluster_id: string; ids: string[] }> = await manager.query(sql, [clusterIds]);
  return new Map(rows.map((r) => [r.cluster_id, r.ids]));
}

export async function clusterViewOf(manager: EntityManager, cluster: ClusterEntity) {
  const [view] = await clusterViews(manager, [cluster]);
  return view;
}
