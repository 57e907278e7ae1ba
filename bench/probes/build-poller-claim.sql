-- The build poller's claim statement before and after session 14 (reading the order once per order,
-- MATERIALIZED, instead of once per node), on synthetic tables: 1,000 CREATING nodes of one work order
-- whose payload is 163 KB (a 45 KB user_data profile and 1,000 servers; 47 KB stored, compressed).
-- Run: psql -h 127.0.0.1 -U postgres -d postgres -f bench/probes/build-poller-claim.sql (BENCHMARKS.md, scale-out)
DROP DATABASE IF EXISTS claim_probe;
CREATE DATABASE claim_probe;
\c claim_probe
CREATE TABLE work_orders (action_id uuid PRIMARY KEY, payload jsonb, created_at timestamptz);
CREATE TABLE nodes (id uuid PRIMARY KEY, name text, status text, physical_id text, data jsonb, action_id uuid, build_deadline timestamptz, project text, "user" text, lease_owner text, lease_expires_at timestamptz, updated_at timestamptz);
INSERT INTO work_orders SELECT gen_random_uuid(), jsonb_build_object('user','u','correlation_id','c','profile', jsonb_build_object('user_data', repeat(md5(random()::text), 1440)), 'create_servers', (SELECT jsonb_agg(jsonb_build_object('node_id', gen_random_uuid(), 'name', 'node-'||i, 'index', i, 'placement', jsonb_build_object('zone','az1'))) FROM generate_series(1,1000) i)), now();
INSERT INTO nodes SELECT gen_random_uuid(), 'n'||i, 'CREATING', 'srv'||i, '{}', (SELECT action_id FROM work_orders), now(), 'p', 'u', NULL, NULL, now() FROM generate_series(1,1000) i;
VACUUM ANALYZE;
\echo OLD
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON, TIMING OFF) UPDATE nodes SET lease_owner = 'w', lease_expires_at = now() + interval '30 s'
       WHERE id IN (SELECT id FROM nodes WHERE status IN ('CREATING', 'DELETING') AND (lease_expires_at IS NULL OR lease_expires_at < now()) ORDER BY updated_at ASC LIMIT 200 FOR UPDATE SKIP LOCKED)
       RETURNING id, name, status, physical_id, data, action_id, build_deadline, project,
         COALESCE((SELECT o.payload->>'user' FROM work_orders o WHERE o.action_id = nodes.action_id), "user") AS owner_user,
         (SELECT o.payload->>'correlation_id' FROM work_orders o WHERE o.action_id = nodes.action_id) AS correlation_id,
         (SELECT n.lease_owner FROM nodes n WHERE n.id = nodes.id) AS previous_owner,
         (SELECT o.created_at FROM work_orders o WHERE o.action_id = nodes.action_id) AS ordered_at;
ROLLBACK;
\echo NEW
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON, TIMING OFF) WITH claimed AS (
         UPDATE nodes SET lease_owner = 'w', lease_expires_at = now() + interval '30 s'
         WHERE id IN (SELECT id FROM nodes WHERE status IN ('CREATING', 'DELETING') AND (lease_expires_at IS NULL OR lease_expires_at < now()) ORDER BY updated_at ASC LIMIT 200 FOR UPDATE SKIP LOCKED)
         RETURNING id, name, status, physical_id, data, action_id, build_deadline, project, "user",
           (SELECT n.lease_owner FROM nodes n WHERE n.id = nodes.id) AS previous_owner
       ), orders AS MATERIALIZED (
         SELECT o.action_id, o.payload->>'user' AS owner_user, o.payload->>'correlation_id' AS correlation_id, o.created_at
         FROM work_orders o WHERE o.action_id IN (SELECT action_id FROM claimed)
       )
       SELECT c.id, c.name, c.status, c.physical_id, c.data, c.action_id, c.build_deadline, c.project,
         COALESCE(o.owner_user, c."user") AS owner_user, o.correlation_id, c.previous_owner, o.created_at AS ordered_at
       FROM claimed c LEFT JOIN orders o ON o.action_id = c.action_id;
ROLLBACK;
\c postgres
DROP DATABASE claim_probe;
