import { DecisionIndex } from '../resize/zone-index';
import { SchemaMap } from '../schema/schema';
import { PolicySpec } from '../schema/spec';
import { CloudView } from './cloud';
import { DriftContext, DriftCountsContext, GroupToRecreate, PolicyDriftFinding } from './drift';
import { RandomSource } from './random';
import { BindingSnapshot, ClusterSnapshot, HookName, PolicyAction, VersionsMap, When } from './types';

/** What `@PolicyType` declares about a class (Senlin's class attributes, senlin-behaviour §1.3). */
export interface PolicyTypeOptions {
  /** e.g. `senlin.policy.zone_placement` */
  name: string;
  /** every version this class serves, with its support status */
  versions: VersionsMap;
  /** the version written into binding data; defaults to the last key of `versions` */
  version?: string;
  /** profile type strings (`os.nova.server-1.0`), or `['ANY']` */
  profileTypes: string[];
  /** `[when, action]` pairs; an empty list means every action */
  targets: Array<[When, string]>;
  /** lower runs first */
  priority: number;
  /** false only for scaling: several instances of the type may be attached */
  singleton?: boolean;
  /** the hooks the class implements itself; the registry refuses a declared hook it does not find */
  hooks: HookName[];
  properties: SchemaMap;
  /** the key of binding data, Senlin's class name (`AffinityPolicy`); defaults to the class name */
  bindingKey?: string;
  /**
   * Whether a hook may ask the cloud for its hypervisors (`CloudView.hypervisors()`); defaults to
   * true. A type that says false never gets them in its decisions' snapshots (1.6 MB read and stored
   * per decision on a cloud of 10,000 hosts) unless another bound policy reads them; a hook of it that
   * asks anyway fails its decision with "The snapshot has no cloud.hypervisors, which the policy
   * needs." (PolicyRegistry.hypervisorFreeTypes, the loader's READS_HYPERVISORS_SQL).
   */
  readsHypervisors?: boolean;
  /**
   * Whether a hook (validate, attach, detach, pre_op, post_op) may read the `members` of a server
   * group (`CloudView.findServerGroup()`); defaults to true. Where every bound policy says false a
   * decision's snapshot lists the project's server groups without their members (about 40 bytes per
   * member, read and stored per decision of every cluster of the project), and a hook that reads a
   * group's `members` anyway fails its decision with "The snapshot has no cloud.server_groups[].members,
   * which the policy needs." Drift hooks are not concerned: one that reads server groups says so
   * (`driftReadsCloud`) and is judged on a snapshot with the members (check, repair, a scaling
   * action's look at the cloud). PolicyRegistry.memberFreeTypes, the loader's READS_MEMBERS_SQL.
   */
  readsGroupMembers?: boolean;
  /**
   * Whether the hooks decide on a summarised cluster (`cluster.summary`: nodes counted per zone and
   * per server group, only some listed; framework/summary.ts) exactly as on every node: they count
   * nodes with nodeCount() and serverGroupMembers(), never from `cluster.nodes`, and read a listed
   * node only where summary.ts says it is listed. Default false: evaluate() refuses a summarised
   * snapshot (IncompleteSnapshotError) and the engine reads every node, which at 10,000 nodes is
   * megabytes read and stored per decision.
   */
  summarised?: boolean;
}

export interface PolicyTypeMeta extends Required<PolicyTypeOptions> {}

export interface ValidateContext {
  /** null: schema and static checks only (POST /policies/validate); set: also ask Nova (policy create) */
  cloud: CloudView | null;
}

/** Another policy already attached to the cluster, as attach sees it. */
export interface AttachedPolicy {
  id: string | null;
  name: string | null;
  /** `<type>-<version>` */
  type: string;
  /** the resolved policy when its type is registered */
  policy: Policy | null;
}

export interface AttachContext {
  cluster: ClusterSnapshot;
  cloud: CloudView;
  random: RandomSource;
  enabled: boolean;
  attached: readonly AttachedPolicy[];
}

export type AttachResult = { ok: true; data: Record<string, unknown> | null } | { ok: false; message: string };

export interface DetachContext {
  cluster: ClusterSnapshot;
  cloud: CloudView;
  binding: BindingSnapshot | null;
}

export interface DetachResult {
  ok: boolean;
  message: string;
}

export interface HookContext {
  action: PolicyAction;
  cluster: ClusterSnapshot;
  cloud: CloudView;
  binding: BindingSnapshot;
  random: RandomSource;
  /** epoch milliseconds */
  now: number;
  maxNodesPerCluster: number;
  /** records a new binding `last_op` (the scaling policy's post_op) */
  setLastOp(timestamp: string): void;
  /**
   * The nodes' zones read once for the whole decision (evaluate() sets it when only built-in
   * policies run, which treat the snapshot as read-only); absent, a hook reads the nodes itself.
   */
  zones?: DecisionIndex;
}

/** Thrown by validate for a spec that is well-formed but unacceptable: HTTP 400 InvalidSpec. */
export class InvalidSpecError extends Error {
  constructor(
    message: string,
    readonly path?: string,
  ) {
    super(message);
    this.name = 'InvalidSpecError';
  }
}

export interface PolicyInit<P> {
  id: string | null;
  name: string | null;
  spec: PolicySpec;
  properties: P;
}

export const POLICY_TYPE_META = Symbol('trellis.policyType');

/**
 * The type names (without their version) whose every registered class says it never reads the
 * hypervisors (`readsHypervisors: false`), sorted: a name one class of which may read them is left
 * out, as the loader's test is on the name alone.
 */
export function hypervisorFreeTypeNames(metas: Iterable<PolicyTypeMeta>): string[] {
  return namesWhereEvery(metas, (meta) => meta.readsHypervisors === false);
}

/**
 * The type names (without their version) whose every registered class says its hooks never read a
 * server group's members (`readsGroupMembers: false`), sorted.
 */
export function memberFreeTypeNames(metas: Iterable<PolicyTypeMeta>): string[] {
  return namesWhereEvery(metas, (meta) => meta.readsGroupMembers === false);
}

/** The type names (without version) every registered entry of which `holds`, sorted. */
export function namesWhereEvery<T extends { name: string }>(entries: Iterable<T>, holds: (entry: T) => boolean): string[] {
  const every = new Map<string, boolean>();
  for (const entry of entries) every.set(entry.name, (every.get(entry.name) ?? true) && holds(entry));
  return [...every].filter(([, yes]) => yes).map(([name]) => name).sort();
}

export type PolicyClass<P = Record<string, unknown>> = (new (init: PolicyInit<P>) => Policy<P>) & {
  [POLICY_TYPE_META]?: PolicyTypeMeta;
  name: string;
};

/**
 * Base of every policy type. Hooks a type does not declare keep these defaults; hooks mutate
 * `action.data` (copy-on-write at the top level) and signal failure with `data.status = 'ERROR'`
 * and `data.reason`, as Senlin's do. A hook may return a short note for the decision trace.
 */
export abstract class Policy<P = Record<string, unknown>> {
  readonly id: string | null;
  readonly name: string | null;
  readonly spec: PolicySpec;
  readonly properties: P;

  constructor(init: PolicyInit<P>) {
    this.id = init.id;
    this.name = init.name;
    this.spec = init.spec;
    this.properties = init.properties;
  }

  /**
   * Read once per instance (the registry keeps built policies per policy id): the class's
   * declaration is fixed (a non-writable property), and reading it through the constructor was a
   * lookup on every `priority` and `needCheck` of a decision's chain.
   */
  get meta(): PolicyTypeMeta {
    if (this.typeMeta !== undefined) return this.typeMeta;
    const meta = (this.constructor as PolicyClass)[POLICY_TYPE_META];
    if (!meta) throw new Error(`${this.constructor.name} is not decorated with @PolicyType`);
    return (this.typeMeta = meta);
  }

  // set at construction, not on first use: every instance of a class keeps one shape, so the chain's
  // calls stay polymorphic (BENCHMARKS.md, decision, "Session 22"); the same for typeName below
  private typeMeta: PolicyTypeMeta | undefined = undefined;

  /** `<type>-<version>` as stored in `policies.type`; once per instance, which the registry keeps per policy id */
  get type(): string {
    return (this.typeName ??= `${this.spec.type}-${this.spec.version}`);
  }

  private typeName: string | undefined = undefined;

  get priority(): number {
    return this.meta.priority;
  }

  get singleton(): boolean {
    return this.meta.singleton;
  }

  validate(_ctx: ValidateContext): void {}

  /** Senlin's base attach: only the profile type check. */
  attach(ctx: AttachContext): AttachResult {
    return this.checkProfileType(ctx.cluster);
  }

  detach(_ctx: DetachContext): DetachResult {
    return { ok: true, message: '' };
  }

  preOp(_ctx: HookContext): string | void {}

  postOp(_ctx: HookContext): string | void {}

  /**
   * Whether this type's drift check reads facts that change behind Trellis's back (server groups,
   * hosts), so a scaling action looks at the cloud again before it is decided. Facts Trellis records
   * itself (the zones nodes were placed in) are judged inside the decision.
   */
  get driftReadsCloud(): boolean {
    return false;
  }

  /**
   * Where the cloud strays from what this policy decided (the `drift` hook, framework/drift.ts).
   * Types that do not declare the hook are never asked.
   */
  detectDrift(_ctx: DriftContext): PolicyDriftFinding[] {
    return [];
  }

  /**
   * detectDrift on a summarised cluster, from counts alone: the same findings, or null when the
   * counts cannot tell (the caller then asks detectDrift with every ACTIVE node). The default
   * always needs the nodes.
   */
  detectDriftFromCounts(_ctx: DriftCountsContext): PolicyDriftFinding[] | null {
    return null;
  }

  /** The vanished group `groupId` of this binding, as a repair creates it again (types with the `drift` hook that own groups). */
  groupToRecreate(_bindingData: Record<string, unknown> | null, _groupId: string, _clusterName: string): GroupToRecreate {
    return 'the policy type does not re-create server groups';
  }

  /** The binding data once the groups `recreated` maps (old id → new id) exist again. */
  withRecreatedGroups(bindingData: Record<string, unknown> | null, _recreated: ReadonlyMap<string, string>): Record<string, unknown> {
    return structuredClone(bindingData ?? {});
  }

  needCheck(when: When, action: PolicyAction): boolean {
    const targets = this.meta.targets;
    if (targets.length === 0) return true;
    for (let i = 0; i < targets.length; i++) if (targets[i][0] === when && targets[i][1] === action.action) return true;
    return false;
  }

  protected checkProfileType(cluster: ClusterSnapshot): AttachResult {
    const allowed = this.meta.profileTypes;
    if (allowed.includes('ANY')) return { ok: true, data: null };
    const type = cluster.profile.type;
    if (!allowed.includes(type)) return { ok: false, message: `Policy not applicable on profile type: ${type}` };
    return { ok: true, data: null };
  }

  /** `{"<ClassName>": {"version", "data"}}` (senlin-behaviour §1.4) */
  protected buildBindingData(data: Record<string, unknown>): Record<string, unknown> {
    return { [this.meta.bindingKey]: { version: this.meta.version, data } };
  }

  /** null when the class key is absent or written by another version */
  protected readBindingData(bindingData: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
    const entry = bindingData?.[this.meta.bindingKey] as { version?: unknown; data?: unknown } | undefined;
    if (!entry || typeof entry !== 'object' || entry.version !== this.meta.version) return null;
    const data = entry.data;
    return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
  }
}

/** Hook names as declared → the method that implements them. */
export const HOOK_METHODS: Record<HookName, keyof Policy> = {
  validate: 'validate',
  attach: 'attach',
  detach: 'detach',
  pre_op: 'preOp',
  post_op: 'postOp',
  need_check: 'needCheck',
  drift: 'detectDrift',
};

/** Registers a class's declarations; the registry reads them when the class is registered. */
export function PolicyType(options: PolicyTypeOptions) {
  return (target: abstract new (...args: never[]) => object): void => {
    const versions = Object.keys(options.versions);
    if (versions.length === 0) throw new Error(`@PolicyType on ${target.name}: 'versions' is empty`);
    const meta: PolicyTypeMeta = {
      ...options,
      version: options.version ?? versions[versions.length - 1],
      singleton: options.singleton ?? true,
      bindingKey: options.bindingKey ?? target.name,
      readsHypervisors: options.readsHypervisors ?? true,
      readsGroupMembers: options.readsGroupMembers ?? true,
      summarised: options.summarised ?? false,
    };
    Object.defineProperty(target, POLICY_TYPE_META, { value: meta, enumerable: false });
  };
}
