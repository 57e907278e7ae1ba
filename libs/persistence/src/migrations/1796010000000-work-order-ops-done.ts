import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * work_orders.ops_done: the outcomes of the node operations of an ops order (check, recover, update,
 * operation) that Nova completed before a transient error put the order off, by node id. The next
 * try reuses them instead of asking Nova again: a reboot of 100 servers that met an outage at the
 * 60th reboots the other 40 when it is tried again, not all 100. Nullable: the release before
 * neither writes nor reads it (its tries repeat every operation, as they did).
 */
export class WorkOrderOpsDone1796010000000 implements MigrationInterface {
  name = 'WorkOrderOpsDone1796010000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('work_orders', new TableColumn({ name: 'ops_done', type: 'jsonb', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('work_orders', 'ops_done');
  }
}
