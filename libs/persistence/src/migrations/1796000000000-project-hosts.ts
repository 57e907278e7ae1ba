import type { MigrationInterface, QueryRunner } from 'typeorm';

/** the host a node's data records, when it is a string (the only kind a view names) */
const HOST = `NEW.data #>> '{placement,host}'`;
const HAS_HOST = `jsonb_typeof(NEW.data #> '{placement,host}') = 'string' AND ${HOST} <> ''`;

/**
 * The host names each project's nodes have recorded, kept by PostgreSQL (issue 15; docs/SECURITY.md):
 *
 * - project_hosts (project, host): every host a node of the project recorded in
 *   `data.placement.host`, ever. Rows are never deleted: a name hidden from a project's members once
 *   stays hidden, though the node that recorded it is gone.
 * - project_host_counts (project, hosts): how many rows project_hosts holds for the project, written
 *   in the same transaction as each new row. The gateway reads this one row on every member's
 *   request and the names only when it changed. Before, each request walked the distinct hosts of
 *   the project's nodes (one index probe per host): with a 10,000-node anti-affinity cluster on
 *   10,000 hosts, about 50 ms of every member's request.
 * - triggers on nodes: after an insert with a host, and after an update that changes the node's
 *   host or project, the host goes into project_hosts (nothing when it is there already). Every writer
 *   (worker, survey, repair, adopt, a script) is covered without knowing of it; a write that leaves
 *   the host as it was runs no trigger.
 * - the rows for the nodes already there. IDX_nodes_project_placement_host (migration
 *   1795945000000), which only the walk read, stays: the release before reads it during a rolling
 *   upgrade (migrations stay additive); a later release may drop it.
 */
export class ProjectHosts1796000000000 implements MigrationInterface {
  name = 'ProjectHosts1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "project_hosts" ("project" character varying(64) NOT NULL, "host" text NOT NULL,
         CONSTRAINT "PK_project_hosts" PRIMARY KEY ("project", "host"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "project_host_counts" ("project" character varying(64) NOT NULL, "hosts" integer NOT NULL,
         CONSTRAINT "PK_project_host_counts" PRIMARY KEY ("project"))`,
    );
    await queryRunner.query(
      `CREATE FUNCTION "trellis_record_project_host"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO "project_hosts" ("project", "host") VALUES (NEW.project, ${HOST}) ON CONFLICT DO NOTHING;
         IF FOUND THEN
           INSERT INTO "project_host_counts" ("project", "hosts") VALUES (NEW.project, 1)
             ON CONFLICT ("project") DO UPDATE SET "hosts" = "project_host_counts"."hosts" + 1;
         END IF;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "nodes_record_host_insert" AFTER INSERT ON "nodes"
         FOR EACH ROW WHEN (${HAS_HOST}) EXECUTE FUNCTION "trellis_record_project_host"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "nodes_record_host_update" AFTER UPDATE OF "data", "project" ON "nodes"
         FOR EACH ROW WHEN (${HAS_HOST} AND (${HOST} IS DISTINCT FROM OLD.data #>> '{placement,host}' OR NEW.project IS DISTINCT FROM OLD.project))
         EXECUTE FUNCTION "trellis_record_project_host"()`,
    );
    await queryRunner.query(
      `INSERT INTO "project_hosts" ("project", "host")
         SELECT DISTINCT n.project, n.data #>> '{placement,host}' FROM "nodes" n
          WHERE jsonb_typeof(n.data #> '{placement,host}') = 'string' AND n.data #>> '{placement,host}' <> ''`,
    );
    await queryRunner.query(`INSERT INTO "project_host_counts" ("project", "hosts") SELECT "project", count(*) FROM "project_hosts" GROUP BY "project"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "nodes_record_host_update" ON "nodes"`);
    await queryRunner.query(`DROP TRIGGER "nodes_record_host_insert" ON "nodes"`);
    await queryRunner.query(`DROP FUNCTION "trellis_record_project_host"()`);
    await queryRunner.query(`DROP TABLE "project_host_counts"`);
    await queryRunner.query(`DROP TABLE "project_hosts"`);
  }
}
