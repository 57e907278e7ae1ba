import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes in the order the list endpoints page (apps/gateway/src/shared/list-query.ts): the default
 * sort key, then id, for one project, one cluster and every project (global_project; for events,
 * retention's (timestamp) index of 1795930000000 serves that). A page deep by marker is then an
 * index range scan however many rows come before it (BENCHMARKS.md, list-paging). The (project,
 * timestamp|created_at) and (cluster_id) indexes they replace are their prefixes. Names are the ones
 * TypeORM derives from the entities, so its schema diff stays empty.
 */
export class ListIndexes1795900000000 implements MigrationInterface {
  name = 'ListIndexes1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_8149bd7a3ce3fa2e56ffd4c94c" ON "events" ("project", "timestamp", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_91866d4f204fa2316a8598fba1" ON "events" ("cluster_id", "timestamp", "id")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_03ac479b4acf4a98c4ba8cc565"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_a206b9cbab9efc4a9cf009e620"`);
    await queryRunner.query(`CREATE INDEX "IDX_eed798573d19d44f01ced68485" ON "actions" ("project", "created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_cc6259334708af5f9bae463ff8" ON "actions" ("cluster_id", "created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "IDX_20aa85b7e16f979dead36723d6" ON "actions" ("created_at", "id")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_3f947d1eb75439874b75166401"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4c588ef2a1322fcbba49436b37"`);
    await queryRunner.query(`CREATE INDEX "IDX_908f54890569ba9b0e5ebf83f9" ON "nodes" ("project", "init_at", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_908f54890569ba9b0e5ebf83f9"`);
    await queryRunner.query(`CREATE INDEX "IDX_4c588ef2a1322fcbba49436b37" ON "actions" ("cluster_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_3f947d1eb75439874b75166401" ON "actions" ("project", "created_at")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_20aa85b7e16f979dead36723d6"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_cc6259334708af5f9bae463ff8"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_eed798573d19d44f01ced68485"`);
    await queryRunner.query(`CREATE INDEX "IDX_a206b9cbab9efc4a9cf009e620" ON "events" ("cluster_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_03ac479b4acf4a98c4ba8cc565" ON "events" ("project", "timestamp")`);
    await queryRunner.query(`DROP INDEX "public"."IDX_91866d4f204fa2316a8598fba1"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_8149bd7a3ce3fa2e56ffd4c94c"`);
  }
}
