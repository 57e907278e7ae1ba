import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The candidates a summarised scale-in lists (issue 15, libs/decisions load-snapshot.ts), read from
 * indexes instead of ranking every node of the cluster:
 *
 * - nodes (cluster_id, recorded zone, created_at to the millisecond in UTC, index): per zone, the
 *   oldest or youngest first `k` nodes are the first `k` entries of a forward or backward index
 *   scan. The zone is `data.placement.zone` when it is a string (nodeZone), the time the one victim
 *   selection compares (timestampMillis: milliseconds, ties by index). The loader's SQL spells both
 *   expressions exactly so, or PostgreSQL will not match the index.
 * - nodes (cluster_id), partial on the bad nodes (ERROR or WARNING, tainted, never created): the
 *   nodes victim selection takes before any other, usually none, without reading the cluster.
 *
 * Expression and partial indexes TypeORM cannot express: NodeEntity names them with
 * `synchronize: false`.
 */
export class SnapshotCandidateIndexes1795960000000 implements MigrationInterface {
  name = 'SnapshotCandidateIndexes1795960000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_cluster_zone_age" ON "nodes" ("cluster_id",
         (CASE WHEN jsonb_typeof("data" #> '{placement,zone}') = 'string' THEN "data" #>> '{placement,zone}' END),
         date_trunc('milliseconds', "created_at" AT TIME ZONE 'UTC'), "index")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_cluster_bad" ON "nodes" ("cluster_id")
        WHERE "status" IN ('ERROR', 'WARNING') OR "tainted" IS TRUE OR "created_at" IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_cluster_bad"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_cluster_zone_age"`);
  }
}
