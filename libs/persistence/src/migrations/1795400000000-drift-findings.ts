import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 6: `cluster_findings` (drift between the cloud and a cluster's policies) and `action_steps`
 * (the several work orders in a row of a drift check or a repair). Names are the ones TypeORM derives
 * from the entities, so its schema diff stays empty (`persistence.contract.ts`).
 */
export class DriftFindings1795400000000 implements MigrationInterface {
  name = 'DriftFindings1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "action_steps" (
        "id" uuid NOT NULL,
        "action_id" uuid NOT NULL,
        "seq" integer NOT NULL,
        "kind" character varying(16) NOT NULL,
        "status" character varying(16) NOT NULL,
        "detail" jsonb NOT NULL DEFAULT '{}',
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_b9a678d9c5274a60dce1029f93d" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_c6a0fcc3586896f47cca31be5b" ON "action_steps" ("action_id")`);
    await queryRunner.query(`
      CREATE TABLE "cluster_findings" (
        "id" uuid NOT NULL,
        "cluster_id" uuid NOT NULL,
        "project" character varying(64) NOT NULL,
        "kind" character varying(32) NOT NULL,
        "fingerprint" text NOT NULL,
        "policy_id" uuid,
        "group_id" character varying(255),
        "host" character varying(255),
        "zone" character varying(255),
        "node_ids" jsonb NOT NULL DEFAULT '[]',
        "message" text NOT NULL,
        "detail" jsonb NOT NULL DEFAULT '{}',
        "status" character varying(16) NOT NULL,
        "found_by" uuid,
        "resolved_by" uuid,
        "found_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "resolved_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_af1c4b0d694775a07b62618038e" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_250ad95dce4b7d11c2ccc1fb6c" ON "cluster_findings" ("cluster_id", "status")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_250ad95dce4b7d11c2ccc1fb6c"`);
    await queryRunner.query(`DROP TABLE "cluster_findings"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_c6a0fcc3586896f47cca31be5b"`);
    await queryRunner.query(`DROP TABLE "action_steps"`);
  }
}
