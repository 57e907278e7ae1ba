import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 11: `services`, Senlin's service table behind `GET /v1/services`: each running gateway,
 * policy-engine and nova-worker registers itself and renews its row. Names are the ones TypeORM
 * derives from ServiceEntity, so its schema diff stays empty.
 */
export class Services1795920000000 implements MigrationInterface {
  name = 'Services1795920000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "services" (
        "id" uuid NOT NULL,
        "binary" character varying(255) NOT NULL,
        "host" character varying(255) NOT NULL,
        "topic" character varying(255) NOT NULL,
        "disabled" boolean NOT NULL DEFAULT false,
        "disabled_reason" character varying(255),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_ba2d347a3168a296416c6c5ccb2" PRIMARY KEY ("id")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "services"`);
  }
}
