import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `receivers`: Senlin's webhook receivers (apps/gateway/src/receivers). Names are the ones TypeORM
 * derives from ReceiverEntity, so its schema diff stays empty.
 */
export class Receivers1795800000000 implements MigrationInterface {
  name = 'Receivers1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "receivers" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "type" character varying(255) NOT NULL,
        "cluster_id" uuid,
        "action" character varying(255),
        "actor" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "params" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "channel" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_58db3b9ea40bf111b785247ea24" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_1a76ff7e709eaa4aabebb67878" ON "receivers" ("cluster_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_46361226ae46a063b4df3b8e62" ON "receivers" ("project", "name")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "receivers"`);
  }
}
