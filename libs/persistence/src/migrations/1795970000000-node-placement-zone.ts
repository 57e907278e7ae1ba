import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The zone a node recorded, as a column PostgreSQL keeps (issue 15, libs/decisions load-snapshot.ts):
 *
 * - nodes.placement_zone, GENERATED ALWAYS AS (`data.placement.zone` when it is a string) STORED:
 *   computed from the placement every writer already records, so no writer has to keep it right;
 *   adding it rewrites the table, which fills it for the rows already there. NodeEntity declares the
 *   same expression (TypeORM keeps it in "typeorm_metadata", made here if this is the first one).
 * - nodes (cluster_id, placement_zone, profile_id, index) INCLUDE (status, tainted, created_at): the
 *   counts per zone of a summarised snapshot read this index alone (an index-only scan; reading every
 *   node's jsonb was most of their cost), grouped in its order; and per zone and profile, the first
 *   nodes in cluster order (OLDEST_PROFILE_FIRST reads k per profile instead of the whole zone).
 * - IDX_nodes_cluster_zone_age (1795960000000) again, on the column instead of the jsonb expression:
 *   (cluster_id, placement_zone, created_at to the millisecond in UTC, index).
 *
 * The indexes TypeORM cannot express (INCLUDE, an expression): NodeEntity names them with
 * `synchronize: false`.
 */
export class NodePlacementZone1795970000000 implements MigrationInterface {
  name = 'NodePlacementZone1795970000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // what TypeORM's schema builder makes for its first generated column or view
    await queryRunner.query(
      `CREATE TABLE IF NOT EXISTS "typeorm_metadata" ("type" character varying NOT NULL, "database" character varying,
         "schema" character varying, "table" character varying, "name" character varying, "value" text)`,
    );
    await queryRunner.addColumn(
      'nodes',
      new TableColumn({
        name: 'placement_zone',
        type: 'text',
        isNullable: true,
        generatedType: 'STORED',
        asExpression: `CASE WHEN jsonb_typeof("data" #> '{placement,zone}') = 'string' THEN "data" #>> '{placement,zone}' END`,
      }),
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_cluster_zone_profile" ON "nodes" ("cluster_id", "placement_zone", "profile_id", "index")
         INCLUDE ("status", "tainted", "created_at")`,
    );
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_cluster_zone_age"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_cluster_zone_age" ON "nodes" ("cluster_id", "placement_zone",
         date_trunc('milliseconds', "created_at" AT TIME ZONE 'UTC'), "index")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_cluster_zone_age"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_nodes_cluster_zone_profile"`);
    await queryRunner.dropColumn('nodes', 'placement_zone');
    await queryRunner.query(
      `CREATE INDEX "IDX_nodes_cluster_zone_age" ON "nodes" ("cluster_id",
         (CASE WHEN jsonb_typeof("data" #> '{placement,zone}') = 'string' THEN "data" #>> '{placement,zone}' END),
         date_trunc('milliseconds', "created_at" AT TIME ZONE 'UTC'), "index")`,
    );
  }
}
