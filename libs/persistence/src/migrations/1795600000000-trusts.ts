import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 17: `trusts`, one Keystone trust id per (user, project), made by the gateway on a user's
 * first action in a project and used by the nova-worker for every Nova call of that project. Names
 * are the ones TypeORM derives from TrustEntity, so its schema diff stays empty.
 */
export class Trusts1795600000000 implements MigrationInterface {
  name = 'Trusts1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "trusts" (
        "user_id" character varying(64) NOT NULL,
        "project_id" character varying(64) NOT NULL,
        "trust_id" character varying(64) NOT NULL,
        "trustee_user_id" character varying(64) NOT NULL,
        "roles" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "verified_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_88e7a12bf9141b1d3b600417e7c" PRIMARY KEY ("user_id", "project_id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_499f86aeddf9612d58edaae0d9" ON "trusts" ("trust_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "trusts"`);
  }
}
