/**
 * The rows of a Senlin 14 (Zed) database that `trellis import-senlin` reads, as MySQL/MariaDB hands
 * them over (mysql2 with `dateStrings`): Senlin's `types.Dict` columns are JSON text (LONGTEXT),
 * its `TZAwareDateTime` columns are UTC `DATETIME` strings without a zone, booleans are TINYINT.
 * Nothing is parsed here, so that the mapping (import-plan.ts) can report a row it cannot read
 * instead of the reader failing on it, and so that captured rows can be replayed as fixtures.
 */

export type DateText = string | null;
/** JSON text of a `types.Dict` column, or null */
export type JsonText = string | null;
/** MySQL TINYINT(1): 0/1, null when unset */
export type TinyInt = number | null;

export interface SenlinProfileRow {
  id: string;
  name: string | null;
  type: string | null;
  spec: JsonText;
  user: string;
  project: string;
  domain: string | null;
  permission: string | null;
  meta_data: JsonText;
  created_at: DateText;
  updated_at: DateText;
}

export interface SenlinPolicyRow {
  id: string;
  user: string;
  project: string;
  domain: string | null;
  name: string | null;
  type: string | null;
  cooldown: number | null;
  level: number | null;
  spec: JsonText;
  data: JsonText;
  created_at: DateText;
  updated_at: DateText;
}

export interface SenlinClusterRow {
  id: string;
  name: string | null;
  profile_id: string;
  user: string;
  project: string;
  domain: string | null;
  parent: string | null;
  init_at: DateText;
  created_at: DateText;
  updated_at: DateText;
  min_size: number | null;
  max_size: number | null;
  desired_capacity: number | null;
  next_index: number | null;
  timeout: number | null;
  status: string | null;
  status_reason: string | null;
  meta_data: JsonText;
  data: JsonText;
  dependents: JsonText;
  config: JsonText;
}

export interface SenlinNodeRow {
  id: string;
  name: string | null;
  physical_id: string | null;
  cluster_id: string | null;
  profile_id: string;
  user: string;
  project: string;
  domain: string | null;
  index: number | null;
  role: string | null;
  init_at: DateText;
  created_at: DateText;
  updated_at: DateText;
  tainted: TinyInt;
  status: string | null;
  status_reason: string | null;
  meta_data: JsonText;
  data: JsonText;
  dependents: JsonText;
}

export interface SenlinBindingRow {
  id: string;
  cluster_id: string;
  policy_id: string;
  enabled: TinyInt;
  priority: number | null;
  data: JsonText;
  last_op: DateText;
}

export interface SenlinReceiverRow {
  id: string;
  name: string | null;
  type: string | null;
  user: string | null;
  project: string | null;
  domain: string | null;
  cluster_id: string | null;
  actor: JsonText;
  action: string | null;
  params: JsonText;
  channel: JsonText;
  created_at: DateText;
  updated_at: DateText;
}

/** Only the columns the importer needs: which action, on what, in which state. */
export interface SenlinActionRow {
  id: string;
  name: string | null;
  cluster_id: string | null;
  target: string | null;
  action: string | null;
  status: string | null;
  owner: string | null;
  created_at: DateText;
}

export interface SenlinServiceRow {
  id: string;
  host: string | null;
  binary: string | null;
  topic: string | null;
  disabled: TinyInt;
  created_at: DateText;
  updated_at: DateText;
}

export interface SenlinHealthRow {
  id: string;
  cluster_id: string;
  check_type: string | null;
  enabled: TinyInt;
}

/** Everything read from one Senlin database, plus the database's own clock (UTC_TIMESTAMP()). */
export interface SenlinRows {
  profiles: SenlinProfileRow[];
  policies: SenlinPolicyRow[];
  clusters: SenlinClusterRow[];
  nodes: SenlinNodeRow[];
  bindings: SenlinBindingRow[];
  receivers: SenlinReceiverRow[];
  /** actions Senlin had not finished (see UNFINISHED_ACTION_STATUSES) */
  actions: SenlinActionRow[];
  services: SenlinServiceRow[];
  health: SenlinHealthRow[];
  /** the database server's UTC time when the rows were read, as a DATETIME string */
  now: string;
}

/**
 * Action states from which Senlin's engine would still run (or resume) the action: READY and
 * RUNNING are picked up by an engine, WAITING and WAITING_LIFECYCLE_COMPLETION wait for a
 * dependency or a lifecycle hook, INIT has not been queued yet.
 */
export const UNFINISHED_ACTION_STATUSES = ['INIT', 'WAITING', 'READY', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION'] as const;

/**
 * The columns read from each table, named explicitly: a schema with a column renamed or missing
 * fails the read with MySQL's own "Unknown column" error instead of silently losing a field.
 * Never read: `credential` (Senlin's trusts, which only Senlin's service user can use) and the
 * `context` columns of `profile` and `action`, which hold Senlin's service user's password in
 * clear text (seen in the real Senlin 14 run).
 */
export const SENLIN_COLUMNS = {
  profile: ['id', 'name', 'type', 'spec', 'user', 'project', 'domain', 'permission', 'meta_data', 'created_at', 'updated_at'],
  policy: ['id', 'user', 'project', 'domain', 'name', 'type', 'cooldown', 'level', 'spec', 'data', 'created_at', 'updated_at'],
  cluster: [
    'id', 'name', 'profile_id', 'user', 'project', 'domain', 'parent', 'init_at', 'created_at', 'updated_at', 'min_size', 'max_size',
    'desired_capacity', 'next_index', 'timeout', 'status', 'status_reason', 'meta_data', 'data', 'dependents', 'config',
  ],
  node: [
    'id', 'name', 'physical_id', 'cluster_id', 'profile_id', 'user', 'project', 'domain', 'index', 'role', 'init_at', 'created_at',
    'updated_at', 'tainted', 'status', 'status_reason', 'meta_data', 'data', 'dependents',
  ],
  cluster_policy: ['id', 'cluster_id', 'policy_id', 'enabled', 'priority', 'data', 'last_op'],
  receiver: ['id', 'name', 'type', 'user', 'project', 'domain', 'cluster_id', 'actor', 'action', 'params', 'channel', 'created_at', 'updated_at'],
  action: ['id', 'name', 'cluster_id', 'target', 'action', 'status', 'owner', 'created_at'],
  service: ['id', 'host', 'binary', 'topic', 'disabled', 'created_at', 'updated_at'],
  health_registry: ['id', 'cluster_id', 'check_type', 'enabled'],
} as const;

export type SenlinTable = keyof typeof SENLIN_COLUMNS;
