import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * services.accepts: the message types a running component consumes, each with the schema versions
 * it takes (`{"trellis.work.order": [1, 2]}`). A policy-engine writes each work order in the newest
 * version every nova-worker that is up takes (README "Upgrading a running deployment"); a row
 * without it (NULL) is a component of a release before this column, which takes version 1 of every
 * message. Nullable: the older release's INSERTs do not name it.
 */
export class ServiceAccepts1795980000000 implements MigrationInterface {
  name = 'ServiceAccepts1795980000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('services', new TableColumn({ name: 'accepts', type: 'jsonb', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('services', 'accepts');
  }
}
