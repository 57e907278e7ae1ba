import { isPlainObject } from '../schema/py-format';
import { CompiledResolver, compileSchemaMap } from '../schema/compiled';
import { PolicySpec, normaliseEnvelope, specTypeName } from '../schema/spec';
import { BUILTIN_POLICY_TYPES } from '../builtins';
import { HOOK_METHODS, POLICY_TYPE_META, Policy, PolicyClass, PolicyTypeMeta, hypervisorFreeTypeNames, memberFreeTypeNames, namesWhereEvery } from './policy';
import { clonePlain } from './plain-data';
import { PolicyCache } from './policy-cache';

export interface RegisteredPolicyType {
  /** `<type>-<version>` */
  typeName: string;
  name: string;
  version: string;
  cls: PolicyClass;
  meta: PolicyTypeMeta;
}

/** Unknown `<type>-<version>`: HTTP 404 with Senlin's text. */
export class PolicyTypeNotFoundError extends Error {
  constructor(readonly typeName: string) {
    super(`The policy_type '${typeName}' could not be found.`);
    this.name = 'PolicyTypeNotFoundError';
  }
}

/** A registered type with its property schema compiled once (see compileSchemaMap). */
interface Entry extends RegisteredPolicyType {
  resolveProperties: CompiledResolver;
}

export interface PolicyIdentity {
  id?: string | null;
  name?: string | null;
}

/**
 * Policy types keyed `<type>-<version>`. Registration refuses duplicates and declared hooks that the
 * class does not implement, so a bad plugin stops the process at start-up, naming itself.
 */
export class PolicyRegistry {
  private readonly types = new Map<string, Entry>();
  /** the same entries, for lookup by type and version without building the key (see entryFor) */
  private readonly entries: Entry[] = [];
  private readonly built = new PolicyCache();
  private hypervisorFree: readonly string[] | null = null;
  private memberFree: readonly string[] | null = null;
  private summarised: readonly string[] | null = null;

  static withBuiltins(): PolicyRegistry {
    const registry = new PolicyRegistry();
    for (const cls of BUILTIN_POLICY_TYPES) registry.register(cls);
    return registry;
  }

  register(cls: PolicyClass): this {
    const culprit = typeof cls === 'function' && cls.name ? cls.name : String(cls);
    const meta = typeof cls === 'function' ? cls[POLICY_TYPE_META] : undefined;
    if (!meta) throw new Error(`Cannot register policy type ${culprit}: it is not decorated with @PolicyType`);
    if (!(cls.prototype instanceof Policy)) throw new Error(`Cannot register policy type ${culprit}: it does not extend Policy`);
    for (const hook of meta.hooks) {
      const method = HOOK_METHODS[hook];
      if (!method) throw new Error(`Cannot register policy type ${culprit}: unknown hook '${hook}'`);
      if (!implementsOwn(cls, method)) {
        throw new Error(`Cannot register policy type ${culprit}: it declares the hook '${hook}' but does not implement ${method}()`);
      }
    }
    const entries: Entry[] = [];
    const resolveProperties = compileSchemaMap(meta.properties, 'properties');
    for (const version of Object.keys(meta.versions)) {
      const typeName = `${meta.name}-${version}`;
      const existing = this.types.get(typeName);
      if (existing) {
        throw new Error(`Cannot register policy type ${culprit}: ${typeName} is already registered by ${existing.cls.name}`);
      }
      entries.push({ typeName, name: meta.name, version, cls, meta, resolveProperties });
    }
    for (const entry of entries) {
      this.types.set(entry.typeName, entry);
      this.entries.push(entry);
    }
    this.hypervisorFree = null;
    this.memberFree = null;
    this.summarised = null;
    return this;
  }

  has(typeName: string): boolean {
    return this.types.has(typeName);
  }

  get(typeName: string): RegisteredPolicyType {
    return this.entry(typeName);
  }

  private entry(typeName: string): Entry {
    const entry = this.types.get(typeName);
    if (!entry) throw new PolicyTypeNotFoundError(typeName);
    return entry;
  }

  /**
   * The entry for a spec, with specTypeName's errors. A spec with string type and version is matched
   * against the entries' parts: the Map lookup would first build `<type>-<version>` and hash it,
   * which cost a tenth of a small decision. Anything else, or no match, takes the general path.
   */
  private entryFor(spec: unknown): Entry {
    if (isPlainObject(spec)) {
      const { type, version } = spec;
      if (typeof type === 'string' && typeof version === 'string') {
        for (const entry of this.entries) if (entry.name === type && entry.version === version) return entry;
      }
    }
    return this.entry(specTypeName(spec));
  }

  /**
   * The registered type names (without version) that never read the hypervisors (every class of
   * the name declares `readsHypervisors: false`): the loader leaves the hypervisors out of a
   * decision's snapshot when every bound policy is of one of them (or is the affinity policy
   * without enable_drs_extension; see readsHypervisors).
   */
  hypervisorFreeTypes(): readonly string[] {
    return (this.hypervisorFree ??= Object.freeze(hypervisorFreeTypeNames(this.entries.map((e) => e.meta))));
  }

  /**
   * The registered type names (without version) whose hooks never read a server group's members
   * (every class of the name declares `readsGroupMembers: false`): the loader lists the project's
   * server groups without their members in a decision's snapshot when every bound policy (and the
   * policy being attached) is of one of them.
   */
  memberFreeTypes(): readonly string[] {
    return (this.memberFree ??= Object.freeze(memberFreeTypeNames(this.entries.map((e) => e.meta))));
  }

  /**
   * The registered type names (without version) whose policies decide on a summarised cluster: the
   * built-in ones and the plugins whose every class declares `summarised: true`. The loader reads a
   * post_op snapshot whole where a bound policy is of another type (evaluate() would refuse it).
   */
  summarisedTypes(): readonly string[] {
    return (this.summarised ??= Object.freeze(namesWhereEvery(this.entries, (e) => e.meta.summarised || BUILTIN_POLICY_TYPES.includes(e.cls))));
  }

  list(): RegisteredPolicyType[] {
    return [...this.types.values()].sort((a, b) => (a.typeName < b.typeName ? -1 : a.typeName > b.typeName ? 1 : 0));
  }

  /**
   * Builds a policy from its spec: envelope checks, type lookup (404), property resolution
   * (SchemaError naming the path). No policy-specific validation; see validatePolicySpec.
   */
  create(spec: unknown, identity: PolicyIdentity = {}): Policy {
    const entry = this.entryFor(spec);
    const envelope: PolicySpec = normaliseEnvelope(spec as Record<string, unknown>);
    const properties = entry.resolveProperties(envelope.properties);
    return new entry.cls({ id: identity.id ?? null, name: identity.name ?? null, spec: envelope, properties });
  }

  /**
   * The policy a decision runs. A built-in type's policy is built once per policy id and spec and
   * kept (see PolicyCache): the engine reads every snapshot fresh, so the spec is a new object each
   * time and only its content can say it is the same. A spec that does not resolve throws as
   * create() does, and nothing is kept. `specDigest`: a digest of the spec the caller vouches for
   * (the engine's loader reads it from the database), which spares comparing the spec on a hit; null
   * for any input the caller cannot vouch for.
   */
  instantiate(spec: unknown, identity: PolicyIdentity = {}, specDigest: string | null = null): Policy {
    const id = identity.id ?? null;
    const name = identity.name ?? null;
    if (id === null) return this.create(spec, identity);
    const cached = this.built.get(id, name, spec, specDigest);
    if (cached) return cached;
    const copy = PolicyCache.copy(spec);
    if (copy === null || !BUILTIN_POLICY_TYPES.includes(this.entryFor(spec).cls)) return this.create(spec, identity);
    // built from a copy of its own, which a caller changing its input afterwards cannot reach
    const policy = this.create(clonePlain(spec), { id, name });
    this.built.set(id, name, copy, policy, specDigest);
    return policy;
  }
}

function implementsOwn(cls: PolicyClass, method: string): boolean {
  let proto = cls.prototype as object | null;
  while (proto && proto !== Policy.prototype) {
    if (Object.prototype.hasOwnProperty.call(proto, method)) {
      return typeof (proto as Record<string, unknown>)[method] === 'function';
    }
    proto = Object.getPrototypeOf(proto);
  }
  return false;
}
