import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Work orders get a lease of their own: one worker applies an order at a time (`lease_owner`,
 * `lease_expires_at`, renewed by a heartbeat while Nova calls are in flight), and `lease_token`
 * fences the holder's writes: a holder whose order was taken over writes nothing. A transient cloud
 * error keeps the order APPLYING with `next_attempt_at` (backoff) instead of redelivering the message.
 * No index: names are the ones TypeORM derives, so its schema diff stays empty (`persistence.contract.ts`).
 */
export class WorkOrderLeases1795700000000 implements MigrationInterface {
  name = 'WorkOrderLeases1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "work_orders"
        ADD "lease_owner" character varying(128),
        ADD "lease_token" uuid,
        ADD "lease_expires_at" TIMESTAMP WITH TIME ZONE,
        ADD "attempts" integer NOT NULL DEFAULT '0',
        ADD "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        ADD "last_error" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "work_orders"
        DROP COLUMN "last_error",
        DROP COLUMN "next_attempt_at",
        DROP COLUMN "attempts",
        DROP COLUMN "lease_expires_at",
        DROP COLUMN "lease_token",
        DROP COLUMN "lease_owner"`);
  }
}
