import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every table and index the entities declare. Index and constraint names are the ones TypeORM derives
 * from the entities, so its schema diff finds nothing to change after this migration
 * (`persistence.contract.ts` checks that on PGlite and PostgreSQL).
 */
export class InitialSchema1795309817000 implements MigrationInterface {
  name = 'InitialSchema1795309817000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "actions" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "cluster_id" uuid,
        "target" uuid NOT NULL,
        "action" character varying(64) NOT NULL,
        "cause" character varying(64) NOT NULL,
        "owner" character varying(128),
        "interval" integer NOT NULL DEFAULT '-1',
        "start_time" double precision,
        "end_time" double precision,
        "timeout" integer NOT NULL,
        "status" character varying(32) NOT NULL,
        "status_reason" text NOT NULL DEFAULT '',
        "inputs" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "outputs" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "depends_on" jsonb NOT NULL DEFAULT '[]'::jsonb,
        "depended_by" jsonb NOT NULL DEFAULT '[]'::jsonb,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        "lease_owner" character varying(128),
        "lease_expires_at" TIMESTAMP WITH TIME ZONE,
        "attempts" integer NOT NULL DEFAULT '0',
        CONSTRAINT "PK_7bfb822f56be449c0b8adbf83cf" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_3f947d1eb75439874b75166401" ON "actions" ("project", "created_at")`);
    await queryRunner.query(`CREATE INDEX "IDX_3f5b6344ac70e35cd80069eb6f" ON "actions" ("status", "lease_expires_at")`);
    await queryRunner.query(`CREATE INDEX "IDX_4c588ef2a1322fcbba49436b37" ON "actions" ("cluster_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_08b3ac6d2fe61fc1c22472ec7c" ON "actions" ("target", "status")`);
    await queryRunner.query(`
      CREATE TABLE "cloud_facts" (
        "kind" character varying(64) NOT NULL,
        "data" jsonb NOT NULL,
        "fetched_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_6fa94a3479889255b13e8229a1b" PRIMARY KEY ("kind")
      )`);
    await queryRunner.query(`
      CREATE TABLE "cluster_policies" (
        "id" uuid NOT NULL,
        "cluster_id" uuid NOT NULL,
        "policy_id" uuid NOT NULL,
        "enabled" boolean NOT NULL DEFAULT true,
        "priority" integer NOT NULL,
        "data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "last_op" TIMESTAMP WITH TIME ZONE,
        "attached_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_573fa6925f51566f83796e6795b" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_74772f00cd13d05330dbb5e71d" ON "cluster_policies" ("policy_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_deb58a6b69f06806303af3babc" ON "cluster_policies" ("cluster_id", "policy_id")`);
    await queryRunner.query(`
      CREATE TABLE "clusters" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "profile_id" uuid NOT NULL,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "init_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        "min_size" integer NOT NULL,
        "max_size" integer NOT NULL,
        "desired_capacity" integer NOT NULL,
        "timeout" integer NOT NULL,
        "status" character varying(32) NOT NULL,
        "status_reason" text NOT NULL DEFAULT '',
        "metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "config" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "next_index" integer NOT NULL DEFAULT '1',
        CONSTRAINT "PK_56c8e201f375e1e961dcdd6831c" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_7964906b216c7adb2814721d5d" ON "clusters" ("project", "name")`);
    await queryRunner.query(`
      CREATE TABLE "decisions" (
        "action_id" uuid NOT NULL,
        "hook" character varying(16) NOT NULL,
        "input" jsonb NOT NULL,
        "output" jsonb NOT NULL,
        "plan" jsonb NOT NULL,
        "trace" jsonb NOT NULL DEFAULT '[]'::jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_5899382106e45bb902884f9df69" PRIMARY KEY ("action_id")
      )`);
    await queryRunner.query(`
      CREATE TABLE "events" (
        "id" uuid NOT NULL,
        "timestamp" TIMESTAMP WITH TIME ZONE NOT NULL,
        "oid" uuid,
        "oname" character varying(255),
        "otype" character varying(32) NOT NULL,
        "cluster_id" uuid,
        "level" integer NOT NULL,
        "user" character varying(64) NOT NULL,
        "project" character varying(64) NOT NULL,
        "action" character varying(64),
        "status" character varying(64),
        "status_reason" text NOT NULL DEFAULT '',
        "meta_data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_5d0d30f3ff5c680ea57fb22c4d" ON "events" ("oid")`);
    await queryRunner.query(`CREATE INDEX "IDX_a206b9cbab9efc4a9cf009e620" ON "events" ("cluster_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_03ac479b4acf4a98c4ba8cc565" ON "events" ("project", "timestamp")`);
    await queryRunner.query(`
      CREATE TABLE "nodes" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "cluster_id" uuid,
        "profile_id" uuid NOT NULL,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "physical_id" character varying(64),
        "index" integer NOT NULL DEFAULT '-1',
        "role" character varying(255),
        "status" character varying(32) NOT NULL,
        "status_reason" text NOT NULL DEFAULT '',
        "data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "tainted" boolean NOT NULL DEFAULT false,
        "init_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        "action_id" uuid,
        "lease_owner" character varying(128),
        "lease_expires_at" TIMESTAMP WITH TIME ZONE,
        "build_deadline" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_682d6427523a0fa43d062ea03ee" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_38153a00e7fdc22e79e4b5f9a6" ON "nodes" ("status", "lease_expires_at")`);
    await queryRunner.query(`CREATE INDEX "IDX_5ba480a328d25cf6333d306181" ON "nodes" ("action_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_622a5557767d083a46aadfc534" ON "nodes" ("project", "name")`);
    await queryRunner.query(`CREATE INDEX "IDX_1e6db25be4b515e345ed165718" ON "nodes" ("cluster_id")`);
    await queryRunner.query(`
      CREATE TABLE "outbox" (
        "id" BIGSERIAL NOT NULL,
        "exchange" character varying(128) NOT NULL,
        "routing_key" character varying(255) NOT NULL,
        "message_id" uuid NOT NULL,
        "type" character varying(128),
        "correlation_id" character varying(128),
        "payload" jsonb NOT NULL,
        "headers" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "published_at" TIMESTAMP WITH TIME ZONE,
        "attempts" integer NOT NULL DEFAULT '0',
        "last_error" text,
        "claimed_until" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_340ab539f309f03bdaa14aa7649" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_2f36ee5236f2793f3e7bd55458" ON "outbox" ("message_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_2f7fecd019359e2409587b4837" ON "outbox" ("published_at", "id")`);
    await queryRunner.query(`
      CREATE TABLE "policies" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "type" character varying(255) NOT NULL,
        "spec" jsonb NOT NULL,
        "data" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_603e09f183df0108d8695c57e28" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_24cf604db5fae56acc48c453b0" ON "policies" ("project", "name")`);
    await queryRunner.query(`
      CREATE TABLE "processed_messages" (
        "consumer" character varying(64) NOT NULL,
        "message_id" uuid NOT NULL,
        "processed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_d4853eee97acfc588e49f9290d1" PRIMARY KEY ("consumer", "message_id")
      )`);
    await queryRunner.query(`
      CREATE TABLE "profiles" (
        "id" uuid NOT NULL,
        "name" character varying(255) NOT NULL,
        "type" character varying(255) NOT NULL,
        "spec" jsonb NOT NULL,
        "metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "project" character varying(64) NOT NULL,
        "user" character varying(64) NOT NULL,
        "domain" character varying(64),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_8e520eb4da7dc01d0e190447c8e" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_d5b1206e3212250295cd455b59" ON "profiles" ("project", "name")`);
    await queryRunner.query(`
      CREATE TABLE "work_orders" (
        "action_id" uuid NOT NULL,
        "cluster_id" uuid,
        "payload" jsonb NOT NULL,
        "status" character varying(16) NOT NULL,
        "result_message_id" uuid,
        "groups" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_f36dcc4e4f6492fca65c7381041" PRIMARY KEY ("action_id")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "work_orders"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_d5b1206e3212250295cd455b59"`);
    await queryRunner.query(`DROP TABLE "profiles"`);
    await queryRunner.query(`DROP TABLE "processed_messages"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_24cf604db5fae56acc48c453b0"`);
    await queryRunner.query(`DROP TABLE "policies"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_2f7fecd019359e2409587b4837"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_2f36ee5236f2793f3e7bd55458"`);
    await queryRunner.query(`DROP TABLE "outbox"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_1e6db25be4b515e345ed165718"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_622a5557767d083a46aadfc534"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_5ba480a328d25cf6333d306181"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_38153a00e7fdc22e79e4b5f9a6"`);
    await queryRunner.query(`DROP TABLE "nodes"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_03ac479b4acf4a98c4ba8cc565"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_a206b9cbab9efc4a9cf009e620"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_5d0d30f3ff5c680ea57fb22c4d"`);
    await queryRunner.query(`DROP TABLE "events"`);
    await queryRunner.query(`DROP TABLE "decisions"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_7964906b216c7adb2814721d5d"`);
    await queryRunner.query(`DROP TABLE "clusters"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_deb58a6b69f06806303af3babc"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_74772f00cd13d05330dbb5e71d"`);
    await queryRunner.query(`DROP TABLE "cluster_policies"`);
    await queryRunner.query(`DROP TABLE "cloud_facts"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_08b3ac6d2fe61fc1c22472ec7c"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4c588ef2a1322fcbba49436b37"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_3f5b6344ac70e35cd80069eb6f"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_3f947d1eb75439874b75166401"`);
    await queryRunner.query(`DROP TABLE "actions"`);
  }
}
