import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention deletes the oldest events and processed-message ids in batches (`retention.ts`): with an
 * index on their time each batch reads only the rows it deletes, instead of scanning the table past
 * the dead rows of the batches before it. Names are the ones TypeORM derives from the entities.
 */
export class RetentionIndexes1795930000000 implements MigrationInterface {
  name = 'RetentionIndexes1795930000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_b5a6ad5d1dc980d07d07969525" ON "events" ("timestamp")`);
    await queryRunner.query(`CREATE INDEX "IDX_3c32d5edbc463c5ff0fbbc00e7" ON "processed_messages" ("processed_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_3c32d5edbc463c5ff0fbbc00e7"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_b5a6ad5d1dc980d07d07969525"`);
  }
}
