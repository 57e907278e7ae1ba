import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reads that stay fast with 1,000 clusters of 100 nodes in a project (issue 15, BENCHMARKS.md
 * big-clusters):
 *
 * - nodes (cluster_id, index, id) replaces nodes (cluster_id): a cluster's node ids in index order
 *   (every cluster view, and the lists of clusters) come from the index alone, without visiting
 *   100 scattered heap pages per cluster. Every lookup by cluster_id is served as before.
 * - nodes (project, placement host), partial on string hosts: the host names a project's nodes
 *   recorded (which the gateway hides from callers who may not see them) are read by skipping
 *   from one distinct host to the next, a few index probes per host, instead of reading every
 *   node of the project on every request. Not declared on the entity (TypeORM cannot express it):
 *   NodeEntity names it with `synchronize: false`.
 */
export class BigClusterIndexes1795945000000 implements MigrationInterface {
  name = 'BigClusterIndexes1795945000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_1f12c16f796cf7dad91b3b7037" ON "nodes" ("cluster_id", "index", "id")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_1e6db25be4b515e345ed165718"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_project_placement_host" ON "nodes" ("project", (("data" -> 'placement') ->> 'host'))
        WHERE jsonb_typeof(("data" -> 'placement') -> 'host') = 'string'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_project_placement_host"`);
    await queryRunner.query(`CREATE INDEX "IDX_1e6db25be4b515e345ed165718" ON "nodes" ("cluster_id")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_1f12c16f796cf7dad91b3b7037"`);
  }
}
