import type { Client } from 'pg';

/**
 * Rows written straight into PostgreSQL, to build a load that would take minutes through the API.
 * They are what the services themselves write for a cluster whose nodes are ACTIVE: placement in
 * `data.placement`, consecutive indexes from 1, `next_index` after the last.
 */

export interface SeedClusters {
  /** a profile created through the API (its project, user and domain are copied) */
  profileId: string;
  clusters: number;
  nodesPerCluster: number;
  /** nodes are spread round-robin over az1..azN */
  zones: number;
  /**
   * each zone's nodes, counted over every cluster in order, go round-robin over its hosts: with
   * 1,000 × 100 nodes and 5,000 hosts a zone, the project's nodes record 10,000 distinct hosts
   * (before, a cluster's node g recorded host g / zones of its zone: at most nodesPerCluster hosts)
   */
  hostsPerZone: number;
  namePrefix: string;
  /** policies bound to every cluster, in this priority order */
  policyIds?: string[];
}

/** Inserts the clusters (with nodes and bindings) in one transaction; returns their ids in name order. */
export async function seedClusters(client: Client, s: SeedClusters): Promise<string[]> {
  if (!Number.isInteger(s.clusters) || s.clusters < 1) throw new Error(`seedClusters: clusters must be a whole number >= 1, got ${s.clusters}`);
  if (!Number.isInteger(s.nodesPerCluster) || s.nodesPerCluster < 0) {
    throw new Error(`seedClusters: nodesPerCluster must be a whole number >= 0, got ${s.nodesPerCluster}`);
  }
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO clusters (id, name, profile_id, project, "user", domain, init_at, created_at, updated_at,
                             min_size, max_size, desired_capacity, timeout, status, status_reason, next_index)
       SELECT gen_random_uuid(), $2 || '-' || lpad(g::text, 6, '0'), p.id, p.project, p."user", p.domain, now(), now(), now(),
              0, -1, $3, 3600, 'ACTIVE', 'Cluster seeded by the benchmark', $3 + 1
         FROM profiles p, generate_series(1, $4) g
        WHERE p.id = $1
       RETURNING id`,
      [s.profileId, s.namePrefix, s.nodesPerCluster, s.clusters],
    );
    if (rows.length !== s.clusters) throw new Error(`seedClusters: profile ${s.profileId} not found`);
    if (s.nodesPerCluster > 0) {
      await client.query(
        `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", domain, physical_id, index, status, status_reason,
                            data, metadata, tainted, init_at, created_at, updated_at)
         SELECT gen_random_uuid(), 'node-' || substr(c.id::text, 1, 8) || '-' || g, c.id, c.profile_id, c.project, c."user", c.domain,
                gen_random_uuid()::text, g, 'ACTIVE', 'Creation succeeded',
                jsonb_build_object('placement', jsonb_build_object(
                  'zone', 'az' || ((g - 1) % $3 + 1),
                  'host', 'az' || ((g - 1) % $3 + 1) || '-host-' || ((((o.k - 1) * $2 + g - 1) / $3) % $4 + 1))),
                '{}'::jsonb, false, now(), now(), now()
           FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, k) JOIN clusters c ON c.id = o.id, generate_series(1, $2) g`,
        [rows.map((r) => r.id), s.nodesPerCluster, s.zones, s.hostsPerZone],
      );
    }
    for (const [i, policyId] of (s.policyIds ?? []).entries()) {
      await client.query(
        `INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at)
         SELECT gen_random_uuid(), c, $2, true, $3, '{}'::jsonb, now() FROM unnest($1::uuid[]) c`,
        [rows.map((r) => r.id), policyId, (i + 1) * 100],
      );
    }
    await client.query('COMMIT');
    await client.query('ANALYZE clusters, nodes, cluster_policies');
    const ordered = await client.query<{ id: string }>(`SELECT id FROM clusters WHERE id = ANY($1::uuid[]) ORDER BY name`, [rows.map((r) => r.id)]);
    return ordered.rows.map((r) => r.id);
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
