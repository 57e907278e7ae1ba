import { ClusterEntity, ProfileEntity } from '@trellis/persistence/entities';
import type { EntityManager } from 'typeorm';
import { JsonText } from '../core/json-text';
import { clusterView } from '../shared/views';

/**
 * Cluster responses with their profile name, node ids and binding ids, loaded in three queries.
 * Ids come grouped per cluster from PostgreSQL: a list of 1,000 clusters of 100 nodes reads 1,000
 * rows, not 100,000 node entities. Each cluster's ids come as the text of a JSON array, which the
 * answer carries as it is (JsonText): not as text[] (array_agg), which the driver parses character
 * by character (about 2 µs per id), nor as json (json_agg), which it parses into strings the answer
 * only writes out again. For uuids, which need no escaping, `array_to_json` writes the very text
 * `JSON.stringify` would (json_agg puts a space after each comma). The node ids come from the
 * (cluster_id, index, id) index alone.
 */
export async function clusterViews(manager: EntityManager, clusters: ClusterEntity[]) {
  if (clusters.length === 0) return [];
  const ids = clusters.map((c) => c.id);
  // One after the other: inside a transaction they share one connection.
  const nodeIds = await idsByCluster(
    manager,
    `SELECT cluster_id, array_to_json(array_agg(id ORDER BY index, id))::text AS ids FROM nodes WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`,
    ids,
  );
  const bindingIds = await idsByCluster(
    manager,
    `SELECT cluster_id, array_to_json(array_agg(id ORDER BY priority, attached_at, id))::text AS ids FROM cluster_policies WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`,
    ids,
  );
  // a statement, not a repository's find: TypeORM's query building was most of this lookup's cost
  const profiles: Array<Pick<ProfileEntity, 'id' | 'name'>> = await manager.query(`SELECT id, name FROM profiles WHERE id = ANY($1::uuid[])`, [
    [...new Set(clusters.map((c) => c.profile_id))],
  ]);
  const profileName = new Map(profiles.map((p) => [p.id, p.name]));
  return clusters.map((c) =>
    clusterView(c, {
      profileName: profileName.get(c.profile_id) ?? null,
      nodeIds: nodeIds.get(c.id) ?? [],
      bindingIds: bindingIds.get(c.id) ?? [],
    }),
  );
}

async function idsByCluster(manager: EntityManager, sql: string, clusterIds: string[]): Promise<Map<string, JsonText<string[]>>> {
  const rows: Array<{ cluster_id: string; ids: string }> = await manager.query(sql, [clusterIds]);
  return new Map(rows.map((r) => [r.cluster_id, new JsonText<string[]>(r.ids)]));
}

export async function clusterViewOf(manager: EntityManager, cluster: ClusterEntity) {
  const [view] = await clusterViews(manager, [cluster]);
  return view;
}
