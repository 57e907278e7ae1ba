import type { EntityManager } from 'typeorm';
import { hotQuery, type ActionEntity } from '@trellis/persistence';
import { sqlTextList } from '@trellis/persistence/sql';
import { CLOUD_WIDE_PROJECT, CloudFactKinds } from '@trellis/contracts';
import {
  AFFINITY_POLICY_TYPE,
  BUILTIN_POLICY_TYPE_NAMES,
  HYPERVISOR_FREE_POLICY_TYPES,
  IncompleteSnapshotError,
  MEMBER_FREE_POLICY_TYPES,
  readsHypervisors,
  victimListing,
  type ClusterSummary,
  type VictimListing,
  type VictimOrder,
} from '@trellis/policies';

/**
 * The input snapshot of a decision (decision 17): everything the policies may look at, read in the
 * caller's transaction. The shape is the public evaluation format of `trellis evaluate`.
 */
export interface Snapshot {
  /** 'none': the action ran no policy hook (recorded for explanation, not replayable) */
  hook: 'pre_op' | 'post_op' | 'attach' | 'detach' | 'none';
  policies: SnapshotPolicy[];
  cluster: SnapshotCluster | null;
  /**
   * `hypervisors` only when a policy that may read them is bound (readsHypervisors): at 10,000
   * hypervisors the list is 1.6 MB of JSON, which every decision read and stored.
   */
  cloud: { availability_zones: unknown[]; hypervisors?: unknown[]; server_groups: unknown[]; unreadable?: Record<string, string> };
  action: { id: string; action: string; target: string; inputs: Record<string, unknown>; data: Record<string, unknown> };
  now: string;
  seed: number;
  /** a node action's target node (its cluster, if any, is `cluster`); absent for cluster actions */
  node?: SnapshotTargetNode | null;
  /** an update to a new profile (NODE_UPDATE, CLUSTER_UPDATE with new_profile_id) */
  profile_update?: SnapshotProfileUpdate;
  [extra: string]: unknown;
}

/** What an action on one node needs to know of it, whether or not it is in a cluster. */
export interface SnapshotTargetNode {
  id: string;
  name: string;
  status: string;
  physical_id: string | null;
  cluster_id: string | null;
}

/**
 * NODE_UPDATE and CLUSTER_UPDATE with a new profile: the profile the nodes move to, the nodes the
 * update touches (the target node, or the cluster's members) with the profile each has now, and
 * those profiles.
 */
export interface SnapshotProfileUpdate {
  /** null: the profile was deleted after the request was accepted */
  profile: { id: string; type: string; spec: Record<string, unknown> } | null;
  nodes: Array<{ id: string; name: string; status: string; physical_id: string | null; profile_id: string }>;
  profiles: Record<string, { type: string; spec: Record<string, unknown> }>;
}

export interface SnapshotPolicy {
  id: string;
  name: string;
  type: string;
  spec: Record<string, unknown>;
  enabled: boolean;
  binding_id: string | null;
  attached_at: string | null;
  binding_data: Record<string, unknown>;
  last_op: string | null;
  /**
   * SHA-256 (hex) of the spec's jsonb text, which PostgreSQL writes the same for the same value: the
   * engine's evaluator passes it as a vouched-for digest (EvaluateOptions.trustSpecDigests), so a
   * policy it built before for the same spec is used without comparing the spec. Absent from a
   * policy loaded alone (attach, detach) and from snapshots stored before it was read.
   */
  spec_digest?: string;
}

export interface SnapshotNode {
  id: string;
  name: string;
  index: number;
  status: string;
  created_at: string | null;
  profile_created_at: string | null;
  tainted: boolean;
  data: Record<string, unknown>;
  /** the node's own metadata (e.g. `roles`), which wins over the profile's */
  metadata: Record<string, unknown>;
  physical_id: string | null;
  server: { availability_zone: string | null; host: string | null };
}

export interface SnapshotCluster {
  id: string;
  name: string;
  min_size: number;
  max_size: number;
  desired_capacity: number;
  profile_id: string;
  profile: { type: string; spec: Record<string, unknown> };
  /** every node, or with `summary` only the nodes it says are listed (libs/policies framework/summary.ts) */
  nodes: SnapshotNode[];
  summary?: ClusterSummary;
}

/** SQL for a timestamptz as `YYYY-MM-DDTHH:MM:SS.sssZ`, exactly what Date.toISOString() writes */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A seed derived from the action id, so random choices (victims, group names) replay identically. */
export function seedOf(actionId: string): number {
  let h = 2166136261;
  for (let i = 0; i < actionId.length; i++) h = Math.imul(h ^ actionId.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The nodes of a cluster, in index order, with only the columns a policy looks at; timestamps as ISO
 * text (Date.toISOString's format), so no Date is made per node. Plain rows: PostgreSQL building
 * JSON for every node measured about twice as slow at 1,000 nodes as sending rows the driver parses.
 */
const NODES_SQL = `
  SELECT n.id, n.name, n.index, n.status, ${isoText('n.created_at')} AS created_at, n.tainted, n.data, n.metadata,
         n.physical_id, ${isoText('p.created_at')} AS profile_created_at
    FROM nodes n JOIN profiles p ON p.id = n.profile_id
   WHERE n.cluster_id = $1 ORDER BY n.index`;

function toNodes(rows: Array<Record<string, any>>): SnapshotNode[] {
  const nodes = new Array<SnapshotNode>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const n = rows[i];
    const placement = n.data?.placement;
    const zone = placement?.zone;
    const host = placement?.host;
    nodes[i] = {
      id: n.id,
      name: n.name,
      index: n.index,
      status: n.status,
      created_at: n.created_at,
      profile_created_at: n.profile_created_at,
      tainted: n.tainted,
      data: n.data ?? {},
      metadata: n.metadata ?? {},
      physical_id: n.physical_id,
      // the zone and host the node recorded (strings only)
      server: { availability_zone: typeof zone === 'string' ? zone : null, host: typeof host === 'string' ? host : null },
    };
  }
  return nodes;
}

/** The bound policies, in the order the chain considers them, as one JSON array. */
const BINDINGS_JSON = (clusterId: string) => `
  SELECT coalesce(json_agg(json_build_object(
           'id', p.id, 'name', p.name, 'type', p.type, 'spec', p.spec,
           'spec_digest', encode(sha256(convert_to(p.spec::text, 'UTF8')), 'hex'), 'enabled', b.enabled, 'binding_id', b.id,
           'attached_at', ${isoText('b.attached_at')}, 'binding_data', coalesce(b.data, '{}'::jsonb),
           'last_op', ${isoText('b.last_op')}
         ) ORDER BY b.priority, b.attached_at, b.id), '[]'::json)
    FROM cluster_policies b JOIN policies p ON p.id = b.policy_id
   WHERE b.cluster_id = ${clusterId}`;

/** the kinds a snapshot carries (`host_zones` is for the gateway's views, not for the policies) */
const SNAPSHOT_KINDS = sqlTextList([CloudFactKinds.availabilityZones, CloudFactKinds.hypervisors, CloudFactKinds.serverGroups]);

/**
 * Whether the cluster (SQL: `clusterId`) has a bound policy that may read the hypervisors
 * (CloudView.hypervisors()): of the built-in types only the affinity policy does, with
 * enable_drs_extension (a spec that does not say plain false counts: Senlin's Boolean takes
 * strings too); a plugin does unless its type is among `hypervisorFree` (SQL, a text[]: the
 * registry's hypervisorFreeTypes(), or HYPERVISOR_FREE_POLICY_TYPES without plugins).
 * load-snapshot.spec.ts holds this to `readsHypervisors`.
 */
export const READS_HYPERVISORS_SQL = (clusterId: string, hypervisorFree: string) => `EXISTS (
    SELECT 1 FROM cluster_policies hb JOIN policies hp ON hp.id = hb.policy_id
     WHERE hb.cluster_id = ${clusterId}
       AND NOT (split_part(hp.type, '-', 1) = ANY (${hypervisorFree})
                OR (split_part(hp.type, '-', 1) = '${AFFINITY_POLICY_TYPE}'
                    AND coalesce(hp.spec->'properties'->'enable_drs_extension', 'false'::jsonb) = 'false'::jsonb)))`;

/**
 * Whether the cluster (SQL: `clusterId`) has a bound policy whose hooks may read a server group's
 * members: one whose type is not among `memberFree` (SQL, a text[]: the registry's
 * memberFreeTypes(), or MEMBER_FREE_POLICY_TYPES without plugins).
 */
export const READS_MEMBERS_SQL = (clusterId: string, memberFree: string) => `EXISTS (
    SELECT 1 FROM cluster_policies mb JOIN policies mp ON mp.id = mb.policy_id
     WHERE mb.cluster_id = ${clusterId} AND NOT split_part(mp.type, '-', 1) = ANY (${memberFree}))`;

/**
 * The Nova facts one project may see: the cloud-wide rows and that project's own (its server
 * groups), never another project's. `project` is SQL: a parameter or the cluster's column; the
 * hypervisors only where `withHypervisors` (SQL) holds; the server groups' members only where
 * `withMembers` (SQL) holds (each group object without its `members` key otherwise, in Nova's order).
 */
const FACTS_JSON = (project: string, withHypervisors: string, withMembers: string) => `
  SELECT coalesce(json_agg(json_build_object('kind', f.kind, 'project', f.project, 'data',
           CASE WHEN f.kind = '${CloudFactKinds.serverGroups}' AND NOT (${withMembers}) AND jsonb_typeof(f.data->'items') = 'array'
                THEN jsonb_set(f.data, '{items}', (
                       SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(g.item) = 'object' THEN g.item - 'members' ELSE g.item END ORDER BY g.n), '[]'::jsonb)
                         FROM jsonb_array_elements(f.data->'items') WITH ORDINALITY AS g(item, n)))
                ELSE f.data END)), '[]'::json)
    FROM cloud_facts f
   WHERE f.kind IN (${SNAPSHOT_KINDS}) AND f.project IN ('${CLOUD_WIDE_PROJECT}', ${project})
     AND (f.kind <> '${CloudFactKinds.hypervisors}' OR ${withHypervisors})`;

const CLUSTER_COLUMNS = 'c.id, c.name, c.min_size, c.max_size, c.desired_capacity, c.profile_id, p.type AS profile_type, p.spec AS profile_spec';

function toCluster(c: Record<string, any>, nodes: SnapshotNode[]): SnapshotCluster {
  return {
    id: c.id,
    name: c.name,
    min_size: c.min_size,
    max_size: c.max_size,
    desired_capacity: c.desired_capacity,
    profile_id: c.profile_id,
    profile: { type: c.profile_type, spec: c.profile_spec },
    nodes,
  };
}

export async function loadCluster(m: EntityManager, clusterId: string): Promise<SnapshotCluster | null> {
  const rows: Array<Record<string, any>> = await m.query(
    `SELECT ${CLUSTER_COLUMNS} FROM clusters c JOIN profiles p ON p.id = c.profile_id WHERE c.id = $1`,
    [clusterId],
  );
  return rows.length ? toCluster(rows[0], toNodes(await hotQuery(m, NODES_SQL, [clusterId]))) : null;
}

export async function loadBindings(m: EntityManager, clusterId: string): Promise<SnapshotPolicy[]> {
  const rows: Array<{ bindings: SnapshotPolicy[] }> = await m.query(`SELECT (${BINDINGS_JSON('$1')}) AS bindings`, [clusterId]);
  return rows[0].bindings;
}

async function loadPolicy(m: EntityManager, policyId: string): Promise<SnapshotPolicy | null> {
  const rows: Array<Record<string, any>> = await m.query(`SELECT id, name, type, spec FROM policies WHERE id = $1`, [policyId]);
  if (!rows.length) return null;
  const r = rows[0];
  return { id: r.id, name: r.name, type: r.type, spec: r.spec, enabled: true, binding_id: null, attached_at: null, binding_data: {}, last_op: null };
}

type FactRow = { kind: string; project: string; data: { items?: unknown[]; error?: string } };

/**
 * The Nova facts as `project` sees them (the cluster's project, or the action's without a cluster),
 * the hypervisors with them when `withHypervisors`, the server groups' members when `withMembers`.
 */
export async function loadCloud(m: EntityManager, project: string, withHypervisors: boolean, withMembers = true): Promise<Snapshot['cloud']> {
  const rows: Array<{ facts: FactRow[] }> = await m.query(
    `SELECT (${FACTS_JSON('$1', withHypervisors ? 'true' : 'false', withMembers ? 'true' : 'false')}) AS facts`,
    [project],
  );
  return toCloud(rows[0].facts, withHypervisors);
}

function toCloud(all: FactRow[], withHypervisors: boolean): Snapshot['cloud'] {
  // one row per kind: the project's own row wins over a cloud-wide one (a server_groups row written
  // before facts were stored per project)
  const byKind = new Map<string, FactRow>();
  for (const r of all) if (!byKind.has(r.kind) || r.project !== CLOUD_WIDE_PROJECT) byKind.set(r.kind, r);
  const rows = [...byKind.values()];
  const items = (kind: string) => byKind.get(kind)?.data?.items ?? [];
  const cloud: Snapshot['cloud'] = withHypervisors
    ? {
        availability_zones: items(CloudFactKinds.availabilityZones),
        hypervisors: items(CloudFactKinds.hypervisors),
        server_groups: items(CloudFactKinds.serverGroups),
      }
    : { availability_zones: items(CloudFactKinds.availabilityZones), server_groups: items(CloudFactKinds.serverGroups) };
  // a fact the worker could not read (e.g. hypervisors without the admin role) is empty for the
  // policies; the decision record says why
  const unreadable = Object.fromEntries(rows.filter((r) => r.data?.error).map((r) => [r.kind, r.data.error as string]));
  if (Object.keys(unreadable).length) cloud.unreadable = unreadable;
  return cloud;
}

/** Which facts a snapshot carries beyond the zones and the server groups. */
interface FactNeeds {
  /** the types whose hooks never read the hypervisors, and never a group's members */
  hypervisorFree: readonly string[];
  memberFree: readonly string[];
  /** carried whatever the bound policies are (the policy being attached, drift judging) */
  hypervisors: boolean;
  members: boolean;
}

/**
 * Cluster, bindings and the Nova facts of the cluster's project in one statement, the nodes in a
 * second: two round trips on every decision's path. Null when the cluster does not exist.
 */
async function loadClusterSnapshot(
  m: EntityManager,
  clusterId: string,
  /** the action and hook whose decision may run on a summarised cluster; null: list every node */
  summarising: { action: ActionEntity; hook: Snapshot['hook'] } | null,
  needs: FactNeeds,
  summarisedTypes: readonly string[],
): Promise<{ cluster: SnapshotCluster; policies: SnapshotPolicy[]; cloud: Snapshot['cloud'] } | null> {
  // the members of each server group are counted only where a plugin's policy is bound
  const counts = summarising ? `, (${ZONE_COUNTS_JSON('c.id')}) AS zone_counts, (${GROUP_COUNTS_JSON('c.id', '$6::text[]')}) AS group_counts` : '';
  const params: unknown[] = [clusterId, needs.hypervisorFree, needs.memberFree, needs.hypervisors, needs.members];
  const rows: Array<Record<string, any>> = await hotQuery(
    m,
    `SELECT ${CLUSTER_COLUMNS}, (${BINDINGS_JSON('c.id')}) AS bindings, h.reads_hypervisors,
            (${FACTS_JSON('c.project', 'h.reads_hypervisors', 'h.reads_members')}) AS facts${counts}
       FROM clusters c JOIN profiles p ON p.id = c.profile_id
       CROSS JOIN LATERAL (SELECT $4::boolean OR ${READS_HYPERVISORS_SQL('c.id', '$2::text[]')} AS reads_hypervisors,
                                  $5::boolean OR ${READS_MEMBERS_SQL('c.id', '$3::text[]')} AS reads_members) h
      WHERE c.id = $1`,
    summarising ? [...params, BUILTIN_POLICY_TYPE_NAMES] : params,
  );
  if (!rows.length) return null;
  const r = rows[0];
  const cluster = toCluster(r, []);
  const cloud = toCloud(r.facts, r.reads_hypervisors === true);
  // A policy whose type does not decide on a summary (a plugin's, unless it says it does) sees every
  // node: its post_op snapshot is read whole at once. A pre_op one is still summarised: the engine
  // reads it first for the bindings (whether to survey the cloud before deciding), and decides again
  // on every node when told to.
  const wholeForPost = summarising?.hook === 'post_op' && !everyTypeIn(r.bindings, summarisedTypes);
  if (summarising && !wholeForPost) {
    const { nodes, summary } = await summarisedNodes(m, summarising.action, summarising.hook, cluster, r.bindings, r.zone_counts, cloud);
    if (summary && r.group_counts) summary.groups = sortedGroups(r.group_counts);
    cluster.nodes = nodes;
    if (summary) cluster.summary = summary;
  } else cluster.nodes = toNodes(await hotQuery(m, NODES_SQL, [clusterId]));
  return { cluster, policies: r.bindings, cloud };
}

/** Whether victim selection takes a node before the others (filterErrorNodes). */
const BAD_SQL = (n: string) => `(${n}.status IN ('ERROR', 'WARNING') OR ${n}.tainted IS TRUE OR ${n}.created_at IS NULL)`;

/** The millisecond OLDEST_PROFILE_FIRST compares (timestampMillis of the profile's ISO text; none: 0). */
const PROFILE_AGE = (p: string) => `coalesce(date_trunc('milliseconds', ${p}.created_at), 'epoch')`;

/**
 * Nodes per zone (all, ACTIVE, bad) and, per profile they run, the others and the profile's age
 * (epoch milliseconds), counted by PostgreSQL: one JSON sub-select of the cluster query. The zone
 * is nodes.placement_zone (the zone the node recorded, as nodeZone reads it: migration
 * 1795970000000 has PostgreSQL keep it), so the counts read the index (cluster_id, placement_zone,
 * profile_id, index) INCLUDE (status, tainted, created_at) alone, in its order, and no node's jsonb.
 */
const ZONE_COUNTS_JSON = (clusterId: string) => `
  SELECT coalesce(json_agg(json_build_object('zone', s.zone, 'nodes', s.nodes, 'active', s.active, 'bad', s.bad, 'profiles', s.profiles)), '[]'::json)
    FROM (SELECT g.zone, sum(g.nodes)::int AS nodes, sum(g.active)::int AS active, sum(g.bad)::int AS bad,
                 json_agg(json_build_object('id', g.profile_id, 'good', g.nodes - g.bad,
                   'age', CASE WHEN gp.id IS NOT NULL THEN (extract(epoch FROM ${PROFILE_AGE('gp')}) * 1000)::bigint END)) AS profiles
            FROM (SELECT z.placement_zone AS zone, z.profile_id, count(*)::int AS nodes,
                         count(*) FILTER (WHERE z.status = 'ACTIVE')::int AS active, count(*) FILTER (WHERE ${BAD_SQL('z')})::int AS bad
                    FROM nodes z WHERE z.cluster_id = ${clusterId} GROUP BY 1, 2) g
            LEFT JOIN profiles gp ON gp.id = g.profile_id
           GROUP BY 1) s`;

/**
 * Nodes per server group they recorded (`data.placement.servergroup`, a string), for a summary's
 * `groups`: only where a bound policy is not of a built-in type (`builtin`, SQL text[]), whose hooks
 * never count them (serverGroupMembers). NULL otherwise.
 */
const GROUP_COUNTS_JSON = (clusterId: string, builtin: string) => `
  SELECT CASE WHEN EXISTS (SELECT 1 FROM cluster_policies gb JOIN policies gp ON gp.id = gb.policy_id
                            WHERE gb.cluster_id = ${clusterId} AND NOT split_part(gp.type, '-', 1) = ANY (${builtin}))
    THEN (SELECT coalesce(json_agg(json_build_object('id', g.id, 'nodes', g.nodes)), '[]'::json)
            FROM (SELECT n.data #>> '{placement,servergroup}' AS id, count(*)::int AS nodes
                    FROM nodes n
                   WHERE n.cluster_id = ${clusterId} AND jsonb_typeof(n.data #> '{placement,servergroup}') = 'string'
                   GROUP BY 1) g)
  END`;

/** A summary's groups in the order of groupCounts (libs/policies), the reference: by id, code unit order. */
function sortedGroups(rows: Array<{ id: string; nodes: number }>): Array<{ id: string; nodes: number }> {
  return rows.map((g) => ({ id: g.id, nodes: g.nodes })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Read only through the index of migration 1795970000000 (nodes (cluster_id, placement_zone,
 * created_at to the millisecond, index)): this must stay the index's expression, or PostgreSQL
 * ranks every node again.
 */
const INDEXED_MILLIS = (n: string) => `date_trunc('milliseconds', ${n}.created_at AT TIME ZONE 'UTC')`;

/** The millisecond a victim order compares (timestampMillis of the ISO text), ties by cluster order. */
const ORDER_SQL: Record<Exclude<VictimOrder, 'profile'>, string> = {
  oldest: `${INDEXED_MILLIS('n')}, n.index`,
  youngest: `${INDEXED_MILLIS('n')} DESC, n.index DESC`,
};

const CANDIDATE_COLUMNS = `n.id, n.name, n.index, n.status, ${isoText('n.created_at')} AS created_at, n.tainted, n.data, n.metadata,
         n.physical_id, ${isoText('p.created_at')} AS profile_created_at`;

/**
 * The nodes a summarised snapshot lists: every bad node (a partial index), and per zone the first
 * few of the others in each order: `$2` the zones to list from (of the zone counts) and `$4` how
 * many in each (each zone's own share of a zone plan: victimListing), and then the first `$3` of
 * the nodes without a zone, each a scan of an index that stops after its limit. OLDEST_PROFILE_FIRST
 * (the profile's age, then cluster order): per zone, the first few in cluster order of each profile
 * the pairs (`$5` zone, `$6` profile: profileWalk) name for it, of which the zone's limit are kept.
 * Same columns and order as NODES_SQL.
 */
function candidatesSql(orders: VictimOrder[]): string {
  const firstIn = (zone: string, order: VictimOrder, limit: string) =>
    order === 'profile'
      ? `
    SELECT ${CANDIDATE_COLUMNS}
      FROM unnest($5::text[], $6::uuid[]) AS ps(zone, profile_id)
      CROSS JOIN LATERAL (SELECT r.id, r.name, r.index, r.status, r.created_at, r.tainted, r.data, r.metadata, r.physical_id, r.profile_id
                            FROM nodes r
                           WHERE r.cluster_id = $1 AND r.placement_zone ${zone} AND r.profile_id = ps.profile_id AND NOT ${BAD_SQL('r')}
                           ORDER BY r.index LIMIT ${limit}) n
      JOIN profiles p ON p.id = n.profile_id
     WHERE ps.zone ${zone}
     ORDER BY ${PROFILE_AGE('p')}, n.index LIMIT ${limit}`
      : `
    SELECT ${CANDIDATE_COLUMNS}
      FROM nodes n JOIN profiles p ON p.id = n.profile_id
     WHERE n.cluster_id = $1 AND n.placement_zone ${zone} AND NOT ${BAD_SQL('n')}
     ORDER BY ${ORDER_SQL[order]} LIMIT ${limit}`;
  const branches = [`SELECT ${CANDIDATE_COLUMNS} FROM nodes n JOIN profiles p ON p.id = n.profile_id WHERE n.cluster_id = $1 AND ${BAD_SQL('n')}`];
  for (const o of orders) {
    branches.push(
      `SELECT f.* FROM unnest($2::text[], $4::int[]) AS zs(zone, depth) CROSS JOIN LATERAL (${firstIn('= zs.zone', o, 'zs.depth')}) f`,
      `(${firstIn('IS NULL', o, '$3')})`,
    );
  }
  // one order lists each node once; a node first in two orders is listed once
  return `SELECT * FROM (${branches.join(orders.length > 1 ? '\n UNION ' : '\n UNION ALL ')}) c ORDER BY c.index`;
}

type ZoneCountRow = {
  zone: string | null;
  nodes: number;
  active: number;
  bad: number;
  /** per profile: its nodes that are not bad, and its age (epoch milliseconds; null: no such profile, none listed) */
  profiles: Array<{ id: string; good: number; age: number | null }>;
};

/**
 * The (zone, profile) pairs whose nodes can be among a zone's first `k` (`depth` of the zone; none
 * for a zone not listed) for OLDEST_PROFILE_FIRST: the zone's profiles from the oldest until they
 * hold `k` nodes that are not bad, and any as old as the last taken (equal ages interleave by
 * cluster order). Usually one profile per zone.
 */
function profileWalk(counts: ZoneCountRow[], depth: (zone: string | null) => number): [Array<string | null>, string[]] {
  const zones: Array<string | null> = [];
  const profiles: string[] = [];
  for (const z of counts) {
    const k = depth(z.zone);
    if (k <= 0) continue;
    const oldestFirst = z.profiles
      .filter((p): p is { id: string; good: number; age: number } => p.good > 0 && p.age !== null)
      .sort((a, b) => a.age - b.age);
    let taken = 0;
    let lastAge = NaN;
    for (const p of oldestFirst) {
      if (taken >= k && p.age !== lastAge) break;
      zones.push(z.zone);
      profiles.push(p.id);
      taken += p.good;
      lastAge = p.age;
    }
  }
  return [zones, profiles];
}

/** The actions whose pre_op decision runs on a summarised cluster (libs/policies framework/summary.ts). */
const SUMMARISED_ACTIONS = new Set(['CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN', 'CLUSTER_RESIZE']);

/**
 * What a post_op snapshot lists: the bad nodes only, as a scale-out's. No built-in type's post_op
 * reads a node (the scaling policy's stamps its binding's last_op); evaluate() takes a summarised
 * post_op only from built-in policies, and a 10,000-node cluster's every scale action read them all.
 */
const NO_VICTIMS: VictimListing = { listed: 0, orders: [] };

/**
 * A cluster's nodes as a summary: counts per zone from PostgreSQL, and only the nodes the action's
 * victim selection can need, or every node when it picks at random.
 */
async function summarisedNodes(
  m: EntityManager,
  action: ActionEntity,
  hook: Snapshot['hook'],
  cluster: SnapshotCluster,
  policies: SnapshotPolicy[],
  counts: ZoneCountRow[],
  cloud: Snapshot['cloud'],
): Promise<{ nodes: SnapshotNode[]; summary?: ClusterSummary }> {
  let nodeCount = 0;
  let activeCount = 0;
  let bad = 0;
  for (const z of counts) {
    nodeCount += z.nodes;
    activeCount += z.active;
    bad += z.bad;
  }
  const zones = counts
    .filter((z): z is ZoneCountRow & { zone: string } => z.zone !== null)
    .map((z) => ({ name: z.zone, nodes: z.nodes, active: z.active }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const listing = hook === 'post_op' ? NO_VICTIMS : victimListing({ action: action.action, inputs: action.inputs ?? {} }, policies, cluster, nodeCount, { zones, cloud });
  if (!listing) return { nodes: toNodes(await hotQuery(m, NODES_SQL, [cluster.id])) };
  // each zone as deep as its share of a zone plan, where one bounds it (victimListing)
  const depths = listing.zones;
  const summary: ClusterSummary = {
    node_count: nodeCount,
    active_count: activeCount,
    zones: depths ? zones.map((z) => ({ ...z, listed: depths.get(z.name) ?? listing.listed })) : zones,
    listed: listing.listed,
    orders: listing.orders,
  };
  const listedZones = summary.zones.filter((z) => (z.listed ?? listing.listed) > 0);
  const listsAny = bad > 0 || ((listing.listed > 0 || listedZones.length > 0) && listing.orders.length > 0);
  const depthOf = new Map(listedZones.map((z) => [z.name, z.listed ?? listing.listed]));
  const params: unknown[] = listing.orders.length
    ? [cluster.id, [...depthOf.keys()], listing.listed, [...depthOf.values()]]
    : [cluster.id];
  // the nodes without a zone (null) as deep as `$3`; a zone not listed has no pairs
  if (listing.orders.includes('profile')) params.push(...profileWalk(counts, (zone) => (zone === null ? listing.listed : (depthOf.get(zone) ?? 0))));
  const nodes = listsAny ? toNodes(await hotQuery(m, candidatesSql(listing.orders), params)) : [];
  return { nodes, summary };
}

/** Node actions decided on the node itself, not by a cluster's policy chain. */
const NODE_OPS = ['NODE_CHECK', 'NODE_RECOVER', 'NODE_OPERATION', 'NODE_UPDATE'];

const UPDATE_NODES_SQL = {
  node: 'SELECT id, name, status, physical_id, profile_id FROM nodes WHERE id = $1',
  cluster: 'SELECT id, name, status, physical_id, profile_id FROM nodes WHERE cluster_id = $1 ORDER BY index',
};

/** The nodes a profile update touches and the profiles involved: read only for such an update. */
async function loadProfileUpdate(m: EntityManager, action: ActionEntity, profileId: string): Promise<SnapshotProfileUpdate> {
  const nodes: SnapshotProfileUpdate['nodes'] = await m.query(
    action.action === 'NODE_UPDATE' ? UPDATE_NODES_SQL.node : UPDATE_NODES_SQL.cluster,
    [action.target],
  );
  const ids = [...new Set([profileId, ...nodes.map((n) => n.profile_id)])];
  const rows: Array<{ id: string; type: string; spec: Record<string, unknown> }> = await m.query(
    'SELECT id, type, spec FROM profiles WHERE id = ANY($1)',
    [ids],
  );
  const profiles = Object.fromEntries(rows.map((r) => [r.id, { type: r.type, spec: r.spec }]));
  const target = profiles[profileId];
  return { profile: target ? { id: profileId, ...target } : null, nodes, profiles };
}

export interface LoadOptions {
  /**
   * List every node even where the decision could run on a summary (counts per zone, only the
   * candidate nodes listed): after evaluate() threw IncompleteSnapshotError, or for a caller that
   * reads the nodes itself.
   */
  everyNode?: boolean;
  /**
   * The policy types (without version) that never read the hypervisors: the evaluator's
   * (`Evaluator.hypervisorFreeTypes`, the built-in ones and the plugins that say so). Defaults to
   * the built-in ones: a plugin type then counts as reading them.
   */
  hypervisorFreeTypes?: readonly string[];
  /**
   * The policy types (without version) whose hooks never read a server group's members: the
   * evaluator's (`Evaluator.memberFreeTypes`). Defaults to the built-in ones: a plugin type then
   * counts as reading them.
   */
  memberFreeTypes?: readonly string[];
  /**
   * List the server groups with their members whatever the bound policies read: drift is judged
   * on the snapshot (a group's members outside it). CLUSTER_CHECK and CLUSTER_REPAIR always are.
   */
  groupMembers?: boolean;
  /**
   * The policy types (without version) that decide on a summarised cluster: the evaluator's
   * (`Evaluator.summarisedTypes`). Defaults to the built-in ones. A post_op snapshot is read whole
   * where a bound policy is of another type.
   */
  summarisedTypes?: readonly string[];
}

/** Whether every policy's type (`<name>-<version>`) is one of `names` (a list of names without version). */
export function everyTypeIn(policies: ReadonlyArray<{ type: string }>, names: readonly string[]): boolean {
  return policies.every((p) => names.includes(p.type.split('-')[0]));
}

/** How the engine and the gateway read a snapshot for `evaluator`: with its lists of types. */
export function loadingFor(evaluator: {
  hypervisorFreeTypes: readonly string[];
  memberFreeTypes: readonly string[];
  summarisedTypes: readonly string[];
}): LoadOptions {
  return { hypervisorFreeTypes: evaluator.hypervisorFreeTypes, memberFreeTypes: evaluator.memberFreeTypes, summarisedTypes: evaluator.summarisedTypes };
}

/** The actions whose decision judges drift: their snapshot lists the server groups' members. */
const JUDGING_DRIFT = new Set(['CLUSTER_CHECK', 'CLUSTER_REPAIR']);

/**
 * The decision's input. A pre_op snapshot of a scale-out, scale-in or resize is summarised (issue
 * 15): PostgreSQL counts the nodes per zone and only the nodes the action may pick as victims are
 * listed; the stored snapshot replays the decision exactly, as a whole list would. A post_op
 * snapshot is summarised with only the bad nodes listed (NO_VICTIMS), unless a plugin's policy is
 * bound.
 */
export async function loadSnapshot(
  m: EntityManager,
  action: ActionEntity,
  hook: Snapshot['hook'],
  now: Date,
  options: LoadOptions = {},
): Promise<Snapshot> {
  const clusterId = action.cluster_id;
  const summarising =
    !options.everyNode && ((hook === 'pre_op' && SUMMARISED_ACTIONS.has(action.action)) || hook === 'post_op') ? { action, hook } : null;
  const hypervisorFree = options.hypervisorFreeTypes ?? HYPERVISOR_FREE_POLICY_TYPES;
  const memberFree = options.memberFreeTypes ?? MEMBER_FREE_POLICY_TYPES;
  const summarisedTypes = options.summarisedTypes ?? BUILTIN_POLICY_TYPE_NAMES;
  // the policy being attached is not bound yet: its attach hook reads the facts too
  const attaching =
    action.action === 'CLUSTER_ATTACH_POLICY' && typeof action.inputs.policy_id === 'string' ? await loadPolicy(m, action.inputs.policy_id) : null;
  const needs: FactNeeds = {
    hypervisorFree,
    memberFree,
    hypervisors: attaching !== null && readsHypervisors(attaching, hypervisorFree),
    members: options.groupMembers === true || JUDGING_DRIFT.has(action.action) || (attaching !== null && !everyTypeIn([attaching], memberFree)),
  };
  const loaded = clusterId ? await loadClusterSnapshot(m, clusterId, summarising, needs, summarisedTypes) : null;
  const cluster = loaded?.cluster ?? null;
  // a cluster that is gone still has bindings to none of its policies, as before
  const policies = loaded ? loaded.policies : clusterId ? await loadBindings(m, clusterId) : [];
  // a cluster's facts are its project's; an action without one sees its own project's (with the
  // hypervisors only if a cluster that is gone left bindings: no policy runs without one)
  const cloud = loaded
    ? loaded.cloud
    : await loadCloud(
        m,
        action.project,
        needs.hypervisors || policies.some((p) => readsHypervisors(p, hypervisorFree)),
        needs.members || !everyTypeIn(policies, memberFree),
      );
  // it joins the snapshot without a binding
  if (attaching && !policies.some((p) => p.id === attaching.id)) policies.push(attaching);
  const snapshot: Snapshot = {
    hook,
    policies,
    cluster,
    cloud,
    action: { id: action.id, action: action.action, target: action.target, inputs: action.inputs, data: action.data ?? {} },
    now: now.toISOString(),
    seed: seedOf(action.id),
  };
  if (action.action.startsWith('NODE_') && (!clusterId || NODE_OPS.includes(action.action))) {
    const rows: SnapshotTargetNode[] = await m.query(
      'SELECT id, name, status, physical_id, cluster_id FROM nodes WHERE id = $1',
      [action.target],
    );
    snapshot.node = rows[0] ?? null;
  }
  const newProfile = action.inputs.new_profile_id;
  if ((action.action === 'NODE_UPDATE' || action.action === 'CLUSTER_UPDATE') && typeof newProfile === 'string') {
    snapshot.profile_update = await loadProfileUpdate(m, action, newProfile);
  }
  return snapshot;
}

/**
 * `use(snapshot)`; when a summarised snapshot lists too few nodes for it (IncompleteSnapshotError
 * from the policies or drift detection), the snapshot is read again with every node and `use` runs
 * on that one, which is then the snapshot the caller stores.
 */
export async function usingEveryNodeIfNeeded<T>(
  m: EntityManager,
  action: ActionEntity,
  snapshot: Snapshot,
  now: Date,
  use: (snapshot: Snapshot) => T | Promise<T>,
  options: LoadOptions = {},
): Promise<{ snapshot: Snapshot; result: T }> {
  try {
    return { snapshot, result: await use(snapshot) };
  } catch (e) {
    if (!(e instanceof IncompleteSnapshotError) || !snapshot.cluster?.summary) throw e;
    const whole = await loadSnapshot(m, action, snapshot.hook, now, { ...options, everyNode: true });
    return { snapshot: whole, result: await use(whole) };
  }
}
