import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * outbox.failed_at: when a relay set the row aside because it can never be published (its message is
 * larger than the broker takes: MessageTooLargeError). Such a row is no longer claimed, retried or
 * counted as pending, and rows written after it are published (docs/RELIABILITY.md §3); the engine's
 * deadline supervisor fails the RUNNING action whose work order it was, with the reason. The partial
 * index keeps that look cheap (set-aside rows are few). Nullable: the older release's INSERTs do not
 * name it, and its relays, which do not know it, go on retrying such a row as before.
 */
export class OutboxSetAside1795990000000 implements MigrationInterface {
  name = 'OutboxSetAside1795990000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('outbox', new TableColumn({ name: 'failed_at', type: 'timestamptz', isNullable: true }));
    await queryRunner.createIndex(
      'outbox',
      new TableIndex({ name: 'IDX_outbox_set_aside', columnNames: ['failed_at', 'id'], where: 'failed_at IS NOT NULL' }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('outbox', 'IDX_outbox_set_aside');
    await queryRunner.dropColumn('outbox', 'failed_at');
  }
}
