import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * work_order_ops: for each node operation of an ops order (check, recover, update, operation),
 * one row per node, written while the order is applied: `{"requested": true}` once Nova accepted
 * the operation's request, then its outcome once Nova completed it. A try that takes the order
 * over, whether its holder died (a worker killed or replaced mid-way through a cluster reboot) or
 * met a transient error, reuses the outcomes, waits for the accepted requests, and asks Nova only
 * for the operations without a row. Before, the outcomes were kept (in work_orders.ops_done, migration
 * 1796010000000) only when a try stopped on a transient error: a worker that died part way left
 * none, and the next holder rebooted every server again. Rows go in the transaction that finishes
 * the order; retention's action purge deletes any left beside an order that is DONE or gone (no
 * foreign key, as nowhere else in this schema).
 *
 * Additive: work_orders.ops_done stays (the release before writes it; this one still reads it).
 */
export class WorkOrderOps1796020000000 implements MigrationInterface {
  name = 'WorkOrderOps1796020000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "work_order_ops" ("action_id" uuid NOT NULL, "node_id" uuid NOT NULL, "outcome" jsonb NOT NULL,
         "done_at" TIMESTAMP WITH TIME ZONE NOT NULL,
         CONSTRAINT "PK_work_order_ops" PRIMARY KEY ("action_id", "node_id"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "work_order_ops"`);
  }
}
