import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `idempotency_keys`: the gateway's answers to writes, by the caller's Idempotency-Key (REST) or
 * message id (RPC), so a retried write returns the first answer instead of starting a second
 * action (docs/RELIABILITY.md §5). Names are the ones TypeORM derives from IdempotencyKeyEntity,
 * so its schema diff stays empty; `expires_at` is indexed for the pruning.
 */
export class IdempotencyKeys1795910000000 implements MigrationInterface {
  name = 'IdempotencyKeys1795910000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "project" character varying(64) NOT NULL,
        "user_id" character varying(64) NOT NULL,
        "transport" character varying(8) NOT NULL,
        "key" character varying(255) NOT NULL,
        "fingerprint" character varying(64) NOT NULL,
        "action_id" uuid,
        "response" jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_4c8928b29023916c6338a0abfc6" PRIMARY KEY ("project", "user_id", "transport", "key")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_e5fc0731b6752a8e9194fa265e" ON "idempotency_keys" ("expires_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
