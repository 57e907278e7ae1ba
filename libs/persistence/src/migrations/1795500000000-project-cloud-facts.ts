import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `cloud_facts` per project: what Nova shows one project (its server groups) is stored under that
 * project's id, so a decision for project A never reads project B's groups; cloud-wide kinds
 * (availability zones, hypervisors, the host → zone map) keep project ''. Existing rows become
 * cloud-wide, except the old server_groups row (every project's groups), which is dropped. Names are the ones TypeORM derives from the entity.
 */
export class ProjectCloudFacts1795500000000 implements MigrationInterface {
  name = 'ProjectCloudFacts1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "cloud_facts" ADD "project" character varying(64) NOT NULL DEFAULT ''`);
    // the one server_groups row held every project's groups: gone, so no decision reads it again;
    // the worker writes the groups anew at its next refresh
    await queryRunner.query(`DELETE FROM "cloud_facts" WHERE "kind" = 'server_groups'`);
    await queryRunner.query(`ALTER TABLE "cloud_facts" DROP CONSTRAINT "PK_6fa94a3479889255b13e8229a1b"`);
    await queryRunner.query(`ALTER TABLE "cloud_facts" ADD CONSTRAINT "PK_bac930980ccfab2ebc8553c4e97" PRIMARY KEY ("kind", "project")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // one row per kind again: the per-project rows cannot be kept under a key of kind alone
    await queryRunner.query(`DELETE FROM "cloud_facts" WHERE "project" <> ''`);
    await queryRunner.query(`ALTER TABLE "cloud_facts" DROP CONSTRAINT "PK_bac930980ccfab2ebc8553c4e97"`);
    await queryRunner.query(`ALTER TABLE "cloud_facts" ADD CONSTRAINT "PK_6fa94a3479889255b13e8229a1b" PRIMARY KEY ("kind")`);
    await queryRunner.query(`ALTER TABLE "cloud_facts" DROP COLUMN "project"`);
  }
}
