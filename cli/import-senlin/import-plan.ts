import { errorMessage } from '@trellis/common';
import type { ClusterEntity, ClusterPolicyEntity, JsonObject, NodeEntity, PolicyEntity, ProfileEntity, ReceiverEntity } from '@trellis/persistence';
import { PolicyRegistry, PolicySpecError, validatePolicySpec } from '@trellis/policies';
import { PROFILE_TYPES } from '../../apps/gateway/src/profiles/profile-types';
import {
  UNFINISHED_ACTION_STATUSES,
  type DateText,
  type JsonText,
  type SenlinActionRow,
  type SenlinClusterRow,
  type SenlinNodeRow,
  type SenlinPolicyRow,
  type SenlinProfileRow,
  type SenlinRows,
  type SenlinServiceRow,
} from './senlin-rows';

/**
 * The pure half of `trellis import-senlin`: Senlin's rows (senlin-rows.ts), what Nova says about
 * each node's server and which ids Trellis already has → what would be imported, unit by unit
 * (each unit is one transaction), and what cannot be, with the reason. No I/O.
 */

/** What Nova said about a node's server, read with Trellis's service identity. */
export type ServerSeen =
  | { state: 'found'; status: string; zone: string | null; host: string | null }
  | { state: 'gone' }
  | { state: 'unreadable'; error: string };

export interface ExistingIds {
  profiles: ReadonlySet<string>;
  policies: ReadonlySet<string>;
  clusters: ReadonlySet<string>;
  nodes: ReadonlySet<string>;
  receivers: ReadonlySet<string>;
  /** `user/project` pairs that already have a Trellis trust */
  trusts: ReadonlySet<string>;
}

export interface ImportOptions {
  /** only these projects (empty: every project) */
  projects: string[];
  /** only these clusters, by id or exact name (empty: every cluster); standalone objects are then left alone */
  clusters: string[];
  /** import clusters with unfinished Senlin actions (only while no Senlin engine is alive) */
  force: boolean;
}

/** Senlin's is_service_dead: a service that has not reported for 2.2 × periodic_interval (60 s) is dead. */
export const SENLIN_SERVICE_DEAD_AFTER_S = 132;

export interface SenlinServiceState {
  id: string;
  binary: string;
  host: string | null;
  /** seconds since it last reported, by the database's clock */
  silent_for_s: number | null;
  alive: boolean;
}

export type UnitState = 'new' | 'present' | 'blocked';

export interface ObjectRef {
  kind: 'profile' | 'policy' | 'cluster' | 'node' | 'binding' | 'receiver' | 'action' | 'health check';
  id: string;
  name: string | null;
  project: string | null;
}

/** Something that is not carried over (or not as it was), and why. */
export interface LeftOut extends ObjectRef {
  reason: string;
}

/** One transaction's worth: a cluster with everything that belongs to it, or the standalone objects. */
export interface ImportUnit {
  kind: 'cluster' | 'node' | 'profiles-and-policies';
  id: string;
  name: string | null;
  project: string | null;
  state: UnitState;
  /** why a blocked unit is not imported */
  blockers: string[];
  /** what the operator should know about an imported unit (nodes whose server is gone, …) */
  notes: string[];
  rows: {
    profiles: ProfileEntity[];
    policies: PolicyEntity[];
    clusters: ClusterEntity[];
    nodes: NodeEntity[];
    bindings: ClusterPolicyEntity[];
    receivers: ReceiverEntity[];
  };
  /** Senlin's unfinished actions on this cluster or its nodes (never imported) */
  unfinished_actions: Array<{ id: string; name: string | null; action: string | null; status: string | null; target: string | null }>;
}

export interface ImportPlan {
  senlin: { read_at: string; services: SenlinServiceState[]; engine_alive: boolean };
  units: ImportUnit[];
  /** objects of the selection that are not imported with any unit */
  left_out: LeftOut[];
}

/** the policy types (`<name>-<version>`) Trellis ships */
const TRELLIS_POLICIES = PolicyRegistry.withBuiltins();

/** Senlin's naive UTC DATETIME text → Date (null stays null) */
export function senlinTime(text: DateText): Date | null {
  if (text === null || text === undefined || text === '') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)/.exec(String(text));
  if (!m) return null;
  const d = new Date(`${m[1]}T${m[2]}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}

class Unreadable extends Error {}

/** a `types.Dict` column: JSON text of an object, or null/empty (→ {}) */
function dict(text: JsonText, column: string): JsonObject {
  if (text === null || text === undefined || text === '' || text === 'null') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Unreadable(`its ${column} column is not JSON (${errorMessage(e)})`);
  }
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Unreadable(`its ${column} column is not a JSON object`);
  return value as JsonObject;
}

export function senlinServiceStates(services: SenlinServiceRow[], now: string): SenlinServiceState[] {
  const clock = senlinTime(now);
  return services.map((s) => {
    const last = senlinTime(s.updated_at) ?? senlinTime(s.created_at);
    const silent = clock && last ? Math.max(0, Math.round((clock.getTime() - last.getTime()) / 1000)) : null;
    return {
      id: s.id,
      binary: s.binary ?? '',
      host: s.host,
      silent_for_s: silent,
      alive: !s.disabled && silent !== null && silent <= SENLIN_SERVICE_DEAD_AFTER_S,
    };
  });
}

/** the binary that runs Senlin's actions (senlin-engine; `senlin-engine` is also what Senlin ≤ 8 called every service) */
const isEngine = (s: SenlinServiceState) => s.binary === 'senlin-engine';

const TRANSITIONAL_CLUSTER = new Set(['INIT', 'CREATING', 'UPDATING', 'RESIZING', 'DELETING', 'CHECKING', 'RECOVERING', 'OPERATING']);
const FINAL_NODE = new Set(['ACTIVE', 'ERROR', 'WARNING']);

interface Context {
  rows: SenlinRows;
  options: ImportOptions;
  existing: ExistingIds;
  servers: ReadonlyMap<string, ServerSeen>;
  engineAlive: boolean;
  readAt: Date;
}

export function planImport(rows: SenlinRows, options: ImportOptions, existing: ExistingIds, servers: ReadonlyMap<string, ServerSeen>): ImportPlan {
  const services = senlinServiceStates(rows.services, rows.now);
  const engineAlive = services.some((s) => isEngine(s) && s.alive);
  const ctx: Context = { rows, options, existing, servers, engineAlive, readAt: senlinTime(rows.now) ?? new Date() };
  const leftOut: LeftOut[] = [];
  const inProject = (project: string | null) => options.projects.length === 0 || (project !== null && options.projects.includes(project));

  const profiles = new Map(rows.profiles.map((p) => [p.id, p]));
  const policies = new Map(rows.policies.map((p) => [p.id, p]));
  const profileRows = new Map<string, MappedProfile>();
  const profileOf = (id: string) => {
    let done = profileRows.get(id);
    if (!done) {
      const p = profiles.get(id);
      done = p ? mapProfile(p, ctx) : { reason: `the profile ${id} is not in Senlin's database` };
      profileRows.set(id, done);
    }
    return done;
  };
  const policyRows = new Map<string, ReturnType<typeof mapPolicy>>();
  const policyOf = (p: SenlinPolicyRow) => {
    let done = policyRows.get(p.id);
    if (!done) policyRows.set(p.id, (done = mapPolicy(p)));
    return done;
  };

  const wanted = rows.clusters.filter(
    (c) => inProject(c.project) && (options.clusters.length === 0 || options.clusters.includes(c.id) || (c.name !== null && options.clusters.includes(c.name))),
  );
  for (const name of options.clusters) {
    if (!rows.clusters.some((c) => c.id === name || c.name === name)) {
      leftOut.push({ kind: 'cluster', id: name, name: null, project: null, reason: 'no cluster of Senlin has this id or name' });
    }
  }
  const units: ImportUnit[] = [];
  const usedProfiles = new Set<string>();
  const usedPolicies = new Set<string>();
  for (const cluster of wanted) {
    units.push(planCluster(cluster, ctx, { profileOf, policyOf, policies, usedProfiles, usedPolicies, leftOut }));
  }

  if (options.clusters.length === 0) {
    // nodes of no cluster (Senlin's orphan nodes): one transaction each
    for (const node of rows.nodes.filter((n) => !n.cluster_id && inProject(n.project))) {
      units.push(planStandaloneNode(node, ctx, profileOf, usedProfiles));
    }
    // profiles and policies no imported cluster uses, together
    const rest = emptyUnit('profiles-and-policies', 'standalone', 'profiles and policies not used by a cluster', null);
    for (const p of rows.profiles.filter((p) => inProject(p.project) && !usedProfiles.has(p.id))) {
      const mapped = profileOf(p.id);
      if ('reason' in mapped && !mapped.row) leftOut.push({ kind: 'profile', id: p.id, name: p.name, project: p.project, reason: mapped.reason });
      else if (!ctx.existing.profiles.has(p.id)) rest.rows.profiles.push(mapped.row!);
    }
    for (const p of rows.policies.filter((p) => inProject(p.project) && !usedPolicies.has(p.id))) {
      const mapped = policyOf(p);
      if (!mapped.row) leftOut.push({ kind: 'policy', id: p.id, name: p.name, project: p.project, reason: mapped.reason });
      else if (!ctx.existing.policies.has(p.id)) rest.rows.policies.push(mapped.row);
    }
    rest.state = rest.rows.profiles.length + rest.rows.policies.length > 0 ? 'new' : 'present';
    units.push(rest);
    // receivers that name no cluster (Senlin's message receivers may) are never imported
    for (const r of rows.receivers.filter((r) => !r.cluster_id && inProject(r.project))) {
      leftOut.push({ kind: 'receiver', id: r.id, name: r.name, project: r.project, reason: receiverTypeReason(r.type) ?? 'it names no cluster' });
    }
  }
  return { senlin: { read_at: ctx.readAt.toISOString(), services, engine_alive: engineAlive }, units, left_out: leftOut };
}

function emptyUnit(kind: ImportUnit['kind'], id: string, name: string | null, project: string | null): ImportUnit {
  return {
    kind,
    id,
    name,
    project,
    state: 'new',
    blockers: [],
    notes: [],
    rows: { profiles: [], policies: [], clusters: [], nodes: [], bindings: [], receivers: [] },
    unfinished_actions: [],
  };
}

interface Lookups {
  profileOf(id: string): MappedProfile;
  policyOf(p: SenlinPolicyRow): ReturnType<typeof mapPolicy>;
  policies: Map<string, SenlinPolicyRow>;
  usedProfiles: Set<string>;
  usedPolicies: Set<string>;
  leftOut: LeftOut[];
}

function planCluster(c: SenlinClusterRow, ctx: Context, look: Lookups): ImportUnit {
  const unit = emptyUnit('cluster', c.id, c.name, c.project);
  const nodes = ctx.rows.nodes.filter((n) => n.cluster_id === c.id);
  const targets = new Set([c.id, ...nodes.map((n) => n.id)]);
  unit.unfinished_actions = ctx.rows.actions
    .filter((a) => (a.cluster_id === c.id || (a.target !== null && targets.has(a.target))) && isUnfinished(a))
    .map((a) => ({ id: a.id, name: a.name, action: a.action, status: a.status, target: a.target }));

  if (ctx.existing.clusters.has(c.id)) {
    // Trellis owns it since an earlier import: Senlin's later state is never merged over Trellis's
    unit.state = 'present';
    return unit;
  }

  // the cluster's profile and every node's (Senlin allows nodes of another profile of the same type)
  for (const profileId of new Set([c.profile_id, ...nodes.map((n) => n.profile_id)])) {
    const p = look.profileOf(profileId);
    look.usedProfiles.add(profileId);
    if ('reason' in p) unit.blockers.push(`profile ${profileId}: ${p.reason}`);
    else if (!ctx.existing.profiles.has(profileId)) unit.rows.profiles.push(p.row);
  }

  if (unit.unfinished_actions.length) {
    const list = unit.unfinished_actions.map((a) => `${a.action ?? a.name} ${a.id} (${a.status})`).join(', ');
    if (!ctx.options.force) {
      unit.blockers.push(
        `Senlin had not finished ${list}; stop Senlin's engine, then import this cluster with --force (the actions are not imported)`,
      );
    } else if (ctx.engineAlive) {
      unit.blockers.push(`Senlin had not finished ${list}, and a senlin-engine is still running (Senlin's service table): stop it before --force`);
    } else {
      unit.notes.push(`Senlin's unfinished ${list} ${unit.unfinished_actions.length > 1 ? 'are' : 'is'} not imported (--force)`);
    }
  }

  let cluster: ClusterEntity | null = null;
  try {
    cluster = mapCluster(c, nodes, unit, ctx);
  } catch (e) {
    if (!(e instanceof Unreadable)) throw e;
    unit.blockers.push(`the cluster's row cannot be read: ${e.message}`);
  }
  for (const n of nodes) {
    if (ctx.existing.nodes.has(n.id)) {
      unit.blockers.push(`node ${n.name ?? n.id} (${n.id}) is already in Trellis, outside this cluster`);
      continue;
    }
    try {
      const node = mapNode(n, unit, ctx);
      if (node) unit.rows.nodes.push(node);
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      unit.blockers.push(`node ${n.name ?? n.id} (${n.id}) cannot be read: ${e.message}`);
    }
  }

  for (const b of ctx.rows.bindings.filter((b) => b.cluster_id === c.id)) {
    const policy = look.policies.get(b.policy_id);
    const ref = { kind: 'binding' as const, id: b.id, name: policy?.name ?? null, project: c.project };
    if (!policy) {
      look.leftOut.push({ ...ref, reason: `the bound policy ${b.policy_id} is not in Senlin's database` });
      continue;
    }
    look.usedPolicies.add(policy.id);
    const mapped = look.policyOf(policy);
    if (!mapped.row) {
      // a placement policy Trellis has but cannot take would change where servers go: block;
      // a type Trellis does not ship (health, load-balancing, …) is left out and said so
      if (mapped.shipped) unit.blockers.push(`policy ${policy.name ?? policy.id} (${policy.id}): ${mapped.reason}`);
      else look.leftOut.push({ ...ref, reason: `policy ${policy.name ?? policy.id} (${policy.id}, ${policy.type}): ${mapped.reason}` });
      continue;
    }
    if (!ctx.existing.policies.has(policy.id)) unit.rows.policies.push(mapped.row);
    try {
      unit.rows.bindings.push({
        id: b.id,
        cluster_id: c.id,
        policy_id: policy.id,
        enabled: b.enabled === null ? true : Boolean(b.enabled),
        priority: b.priority ?? 0,
        data: dict(b.data, 'data'),
        last_op: senlinTime(b.last_op),
        // Senlin keeps no attach time; the earliest it can have been: the later of the cluster's and the policy's creation
        attached_at: latest(senlinTime(c.created_at) ?? senlinTime(c.init_at), senlinTime(policy.created_at)) ?? ctx.readAt,
      });
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      unit.blockers.push(`binding ${b.id} of policy ${policy.name ?? policy.id} cannot be read: ${e.message}`);
    }
  }

  for (const r of ctx.rows.receivers.filter((r) => r.cluster_id === c.id)) {
    const ref = { kind: 'receiver' as const, id: r.id, name: r.name, project: r.project };
    const typeReason = receiverTypeReason(r.type);
    if (typeReason) {
      look.leftOut.push({ ...ref, reason: typeReason });
      continue;
    }
    if (ctx.existing.receivers.has(r.id)) {
      unit.blockers.push(`receiver ${r.name ?? r.id} (${r.id}) is already in Trellis`);
      continue;
    }
    try {
      unit.rows.receivers.push({
        id: r.id,
        name: r.name ?? '',
        type: 'webhook',
        cluster_id: c.id,
        action: r.action,
        // Senlin's actor is Senlin's trust (to Senlin's service user): Trellis cannot use it
        actor: {},
        params: dict(r.params, 'params'),
        channel: dict(r.channel, 'channel'),
        project: r.project ?? c.project,
        user: r.user ?? c.user,
        domain: r.domain,
        created_at: senlinTime(r.created_at) ?? ctx.readAt,
        updated_at: senlinTime(r.updated_at),
      });
      const owner = `${r.user ?? c.user}/${r.project ?? c.project}`;
      if (!ctx.existing.trusts.has(owner)) {
        unit.notes.push(
          `receiver ${r.name ?? r.id}: its webhook answers 403 until its owner (user ${r.user}) makes one request to Trellis that starts an action (that makes the owner's trust)`,
        );
      }
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      unit.blockers.push(`receiver ${r.name ?? r.id} (${r.id}) cannot be read: ${e.message}`);
    }
  }

  for (const h of ctx.rows.health.filter((h) => h.cluster_id === c.id)) {
    look.leftOut.push({
      kind: 'health check',
      id: h.id,
      name: h.check_type,
      project: c.project,
      reason: `cluster ${c.name ?? c.id}: Trellis has no health manager; the cluster's ${h.check_type ?? ''} health check is not carried over`,
    });
  }
  if (cluster) unit.rows.clusters.push(cluster);
  unit.state = unit.blockers.length ? 'blocked' : 'new';
  return unit;
}

function planStandaloneNode(n: SenlinNodeRow, ctx: Context, profileOf: Lookups['profileOf'], usedProfiles: Set<string>): ImportUnit {
  const unit = emptyUnit('node', n.id, n.name, n.project);
  if (ctx.existing.nodes.has(n.id)) {
    unit.state = 'present';
    return unit;
  }
  usedProfiles.add(n.profile_id);
  const p = profileOf(n.profile_id);
  if ('reason' in p) unit.blockers.push(`profile ${n.profile_id}: ${p.reason}`);
  else if (!ctx.existing.profiles.has(n.profile_id)) unit.rows.profiles.push(p.row);
  unit.unfinished_actions = ctx.rows.actions
    .filter((a) => a.target === n.id && isUnfinished(a))
    .map((a) => ({ id: a.id, name: a.name, action: a.action, status: a.status, target: a.target }));
  if (unit.unfinished_actions.length && (!ctx.options.force || ctx.engineAlive)) {
    unit.blockers.push(
      `Senlin had not finished ${unit.unfinished_actions.map((a) => `${a.action} ${a.id} (${a.status})`).join(', ')}; ` +
        (ctx.engineAlive ? 'a senlin-engine is still running: stop it before --force' : 'import it with --force once Senlin is stopped'),
    );
  }
  try {
    const node = mapNode(n, unit, ctx);
    if (node) unit.rows.nodes.push(node);
  } catch (e) {
    if (!(e instanceof Unreadable)) throw e;
    unit.blockers.push(`the node's row cannot be read: ${e.message}`);
  }
  unit.state = unit.blockers.length ? 'blocked' : 'new';
  return unit;
}

const isUnfinished = (a: SenlinActionRow) => (UNFINISHED_ACTION_STATUSES as readonly string[]).includes(a.status ?? '');

function receiverTypeReason(type: string | null): string | null {
  if (type === 'webhook') return null;
  if (type === 'message') return 'a message receiver (Zaqar queue): Trellis has no message service; only webhook receivers are carried over';
  return `receiver type '${type}' is not one Trellis has (webhook)`;
}

const latest = (a: Date | null, b: Date | null): Date | null => (a && b ? (a > b ? a : b) : (a ?? b));

/** a profile Trellis can build nodes of; or why not, with the row when the profile itself can still be imported */
type MappedProfile = { row: ProfileEntity } | { reason: string; row?: ProfileEntity };

function mapProfile(p: SenlinProfileRow, ctx: Context): MappedProfile {
  let spec: JsonObject;
  let metadata: JsonObject;
  try {
    spec = dict(p.spec, 'spec');
    metadata = dict(p.meta_data, 'meta_data');
  } catch (e) {
    if (e instanceof Unreadable) return { reason: e.message };
    throw e;
  }
  let type: string;
  let buildsNodes: boolean;
  try {
    const validated = PROFILE_TYPES.validate(spec);
    type = validated.type;
    buildsNodes = validated.profileType.buildsNodes;
  } catch (e) {
    return { reason: `Trellis refuses its spec: ${errorMessage(e)}` };
  }
  const row: ProfileEntity = {
    id: p.id,
    name: p.name ?? '',
    type,
    spec,
    metadata,
    project: p.project,
    user: p.user,
    domain: p.domain,
    created_at: senlinTime(p.created_at) ?? ctx.readAt,
    updated_at: senlinTime(p.updated_at),
  };
  // a heat-stack or docker profile is kept as a profile, but no cluster or node of it can be
  if (!buildsNodes) return { reason: `its type ${type} is one Trellis keeps but does not build nodes of`, row };
  return { row };
}

function mapPolicy(p: SenlinPolicyRow): { row: PolicyEntity; reason?: undefined; shipped: true } | { row?: undefined; reason: string; shipped: boolean } {
  let spec: JsonObject;
  let data: JsonObject;
  try {
    spec = dict(p.spec, 'spec');
    data = dict(p.data, 'data');
  } catch (e) {
    if (e instanceof Unreadable) return { reason: e.message, shipped: true };
    throw e;
  }
  const shipped = p.type !== null && TRELLIS_POLICIES.has(p.type);
  let typeName: string;
  try {
    typeName = validatePolicySpec(spec, { registry: TRELLIS_POLICIES, name: p.name, id: p.id }).typeName;
  } catch (e) {
    if (e instanceof PolicySpecError && e.status === 404) return { reason: 'Trellis has no policy of this type', shipped: false };
    return { reason: `Trellis refuses its spec: ${errorMessage(e)}`, shipped };
  }
  return {
    row: {
      id: p.id,
      name: p.name ?? '',
      type: typeName,
      spec,
      data,
      project: p.project,
      user: p.user,
      domain: p.domain,
      created_at: senlinTime(p.created_at) ?? new Date(0),
      updated_at: senlinTime(p.updated_at),
    },
    shipped: true,
  };
}

function mapCluster(c: SenlinClusterRow, nodes: SenlinNodeRow[], unit: ImportUnit, ctx: Context): ClusterEntity {
  const dependents = dict(c.dependents, 'dependents');
  if (Object.keys(dependents).length) unit.notes.push(`Senlin's dependents of the cluster (${JSON.stringify(dependents)}) are not carried over`);
  let status = c.status ?? 'ACTIVE';
  let reason = c.status_reason ?? '';
  if (TRANSITIONAL_CLUSTER.has(status)) {
    reason = `Imported from Senlin while ${status}${reason ? ` (${reason})` : ''}; check its nodes.`;
    unit.notes.push(`the cluster was ${status} in Senlin: imported as WARNING`);
    status = 'WARNING';
  }
  const highest = nodes.reduce((m, n) => Math.max(m, n.index ?? 0), 0);
  return {
    id: c.id,
    name: c.name ?? '',
    profile_id: c.profile_id,
    project: c.project,
    user: c.user,
    domain: c.domain,
    init_at: senlinTime(c.init_at),
    created_at: senlinTime(c.created_at),
    updated_at: senlinTime(c.updated_at),
    min_size: c.min_size ?? 0,
    max_size: c.max_size ?? -1,
    desired_capacity: c.desired_capacity ?? nodes.length,
    timeout: c.timeout ?? 3600,
    status,
    status_reason: reason,
    metadata: dict(c.meta_data, 'meta_data'),
    data: dict(c.data, 'data'),
    config: dict(c.config, 'config'),
    // never below an index a node already has, whatever Senlin recorded
    next_index: Math.max(c.next_index ?? 1, highest + 1),
  };
}

/** A node as Trellis keeps it, with the zone and host Nova reports for its server. */
function mapNode(n: SenlinNodeRow, unit: ImportUnit, ctx: Context): NodeEntity | null {
  const data = dict(n.data, 'data');
  const metadata = dict(n.meta_data, 'meta_data');
  const dependents = dict(n.dependents, 'dependents');
  const label = `node ${n.name ?? n.id} (${n.id})`;
  if (Object.keys(dependents).length) unit.notes.push(`${label}: Senlin's dependents (${JSON.stringify(dependents)}) are not carried over`);
  let status = n.status ?? 'ERROR';
  let reason = n.status_reason ?? '';
  if (!FINAL_NODE.has(status)) {
    reason = `Imported from Senlin while ${status}${reason ? ` (${reason})` : ''}.`;
    unit.notes.push(`${label} was ${status} in Senlin: imported as ERROR`);
    status = 'ERROR';
  }
  if (n.physical_id) {
    const seen = ctx.servers.get(n.physical_id);
    if (!seen || seen.state === 'unreadable') {
      unit.blockers.push(`${label}: its server ${n.physical_id} could not be read from Nova${seen ? ` (${seen.error})` : ''}`);
    } else if (seen.state === 'gone') {
      status = 'ERROR';
      reason = `Imported from Senlin: its server ${n.physical_id} was not found in Nova.`;
      unit.notes.push(`${label}: its server ${n.physical_id} is gone from Nova; imported as ERROR`);
    } else {
      const placement = { ...((data.placement as JsonObject | undefined) ?? {}) };
      if (seen.zone) placement.zone = seen.zone;
      if (seen.host) placement.host = seen.host;
      data.placement = placement;
      if (seen.status === 'ERROR' && status === 'ACTIVE') {
        status = 'ERROR';
        reason = `Imported from Senlin: Nova reports its server ${n.physical_id} in ERROR.`;
        unit.notes.push(`${label}: Nova reports its server in ERROR; imported as ERROR`);
      }
    }
  } else if (status === 'ACTIVE') {
    status = 'ERROR';
    reason = 'Imported from Senlin: the node has no server (no physical_id).';
    unit.notes.push(`${label} has no server; imported as ERROR`);
  }
  return {
    id: n.id,
    name: n.name ?? '',
    cluster_id: n.cluster_id || null,
    profile_id: n.profile_id,
    project: n.project,
    user: n.user,
    domain: n.domain,
    physical_id: n.physical_id || null,
    index: n.index ?? -1,
    role: n.role,
    status,
    status_reason: reason,
    data,
    metadata,
    tainted: Boolean(n.tainted),
    init_at: senlinTime(n.init_at),
    created_at: senlinTime(n.created_at),
    updated_at: senlinTime(n.updated_at),
    action_id: null,
    lease_owner: null,
    lease_expires_at: null,
    build_deadline: null,
  };
}

/** The physical ids whose servers the importer must look up in Nova for this selection. */
export function serversToRead(rows: SenlinRows, options: ImportOptions): string[] {
  const inProject = (project: string | null) => options.projects.length === 0 || (project !== null && options.projects.includes(project));
  const clusters = new Set(
    rows.clusters
      .filter((c) => inProject(c.project) && (options.clusters.length === 0 || options.clusters.includes(c.id) || (c.name !== null && options.clusters.includes(c.name))))
      .map((c) => c.id),
  );
  return [
    ...new Set(
      rows.nodes
        .filter((n) => n.physical_id && (n.cluster_id ? clusters.has(n.cluster_id) : options.clusters.length === 0 && inProject(n.project)))
        .map((n) => n.physical_id!),
    ),
  ];
}
