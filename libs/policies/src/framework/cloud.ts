import { isPlainObject } from '../schema/py-format';

/** Nova facts as Nova returns them (os-availability-zone, os-hypervisors, os-server-groups). */
export type AvailabilityZoneFact = string | { zoneName: string; zoneState?: { available?: boolean } | null };

export interface HypervisorFact {
  id: string | number;
  hypervisor_hostname: string;
  service?: { host?: string | null } | null;
}

export interface ServerGroupFact {
  id: string;
  name: string;
  /** Nova 2.64+ */
  policy?: string;
  /** before Nova 2.64 */
  policies?: string[];
  rules?: Record<string, unknown> | null;
  members?: string[];
}

export interface CloudFacts {
  availability_zones?: AvailabilityZoneFact[];
  hypervisors?: HypervisorFact[];
  server_groups?: ServerGroupFact[];
}

export type CloudChange =
  | { op: 'create_server_group'; id: string; name: string; policy: string; rules: Record<string, unknown> | null }
  | { op: 'delete_server_group'; id: string };

/** A fact the snapshot lacks but a policy asked for: the caller built an incomplete snapshot. */
export class CloudFactMissingError extends Error {
  constructor(readonly fact: keyof CloudFacts | 'server_groups[].members') {
    super(`The snapshot has no cloud.${fact}, which the policy needs.`);
    this.name = 'CloudFactMissingError';
  }
}

/** Decision 8: Nova 2.64+ reports `policy`; older Nova `policies[0]`. */
export function serverGroupPolicy(group: ServerGroupFact): string | null {
  if (typeof group.policy === 'string' && group.policy) return group.policy;
  if (Array.isArray(group.policies) && typeof group.policies[0] === 'string') return group.policies[0];
  return null;
}

/**
 * What policies may ask of Nova during one evaluation. Synchronous on purpose: the facts were
 * fetched before the decision and the decision itself does no I/O.
 */
export interface CloudView {
  /** names of the zones Nova reports as available, in Nova's order */
  availableZones(): string[];
  /** Senlin's validate_azs: the given names that are available, in the given order */
  validateAzs(names: readonly string[]): string[];
  hypervisors(): HypervisorFact[];
  /** by id first, then by exact name */
  findServerGroup(nameOrId: string): ServerGroupFact | null;
  createServerGroup(name: string, policy: string, rules: Record<string, unknown> | null): ServerGroupFact;
  deleteServerGroup(id: string): void;
}

/** An in-memory Nova built from a snapshot's facts; records what the hooks changed. */
export class InMemoryCloud implements CloudView {
  readonly changes: CloudChange[] = [];
  // set at construction, filled on first use: one shape for every instance (see Policy.typeMeta)
  private zones: string[] | undefined = undefined;
  private zoneSet: Set<string> | undefined = undefined;
  private groups: ServerGroupFact[] | undefined = undefined;

  constructor(
    private readonly facts: CloudFacts | null | undefined,
    private readonly newId: (kind: string) => string,
  ) {}

  availableZones(): string[] {
    if (this.zones) return this.zones;
    const raw = this.facts?.availability_zones;
    if (!Array.isArray(raw)) throw new CloudFactMissingError('availability_zones');
    const zones: string[] = [];
    for (const z of raw) {
      if (typeof z === 'string') zones.push(z);
      else if (isPlainObject(z) && typeof z.zoneName === 'string' && z.zoneState?.available !== false) zones.push(z.zoneName);
    }
    this.zones = zones;
    // a handful of zones is scanned: a set would hash every fresh name of the snapshot
    if (zones.length > 16) this.zoneSet = new Set(zones);
    return zones;
  }

  validateAzs(names: readonly string[]): string[] {
    const zones = this.availableZones();
    const set = this.zoneSet;
    const out: string[] = [];
    for (const name of names) if (set ? set.has(name) : zones.includes(name)) out.push(name);
    return out;
  }

  hypervisors(): HypervisorFact[] {
    const raw = this.facts?.hypervisors;
    if (!Array.isArray(raw)) throw new CloudFactMissingError('hypervisors');
    return raw;
  }

  findServerGroup(nameOrId: string): ServerGroupFact | null {
    const groups = this.serverGroups();
    return groups.find((g) => g.id === nameOrId) ?? groups.find((g) => g.name === nameOrId) ?? null;
  }

  createServerGroup(name: string, policy: string, rules: Record<string, unknown> | null): ServerGroupFact {
    const group: ServerGroupFact = { id: this.newId('server_group'), name, policy, rules: rules ?? {}, members: [] };
    this.groups = [...this.serverGroupsOrEmpty(), group];
    this.changes.push({ op: 'create_server_group', id: group.id, name, policy, rules });
    return group;
  }

  deleteServerGroup(id: string): void {
    // Nova's delete is idempotent for Senlin (ignore_missing), so a group absent from the facts is fine.
    this.groups = this.serverGroupsOrEmpty().filter((g) => g.id !== id);
    this.changes.push({ op: 'delete_server_group', id });
  }

  private serverGroups(): ServerGroupFact[] {
    if (this.groups) return this.groups;
    const raw = this.facts?.server_groups;
    if (!Array.isArray(raw)) throw new CloudFactMissingError('server_groups');
    this.groups = raw.some(membersLeftOut) ? raw.map((g) => (membersLeftOut(g) ? withoutMembers(g) : g)) : raw;
    return this.groups;
  }

  private serverGroupsOrEmpty(): ServerGroupFact[] {
    if (this.groups) return this.groups;
    const raw = this.facts?.server_groups;
    return Array.isArray(raw) ? raw : [];
  }
}

/**
 * A group listed without its `members` key: the loader leaves the members out where every bound
 * policy says it never reads them (`readsGroupMembers: false`). Nova always lists them (the worker
 * stores `[]` for none).
 */
function membersLeftOut(group: unknown): group is ServerGroupFact {
  return isPlainObject(group) && !Object.prototype.hasOwnProperty.call(group, 'members');
}

/**
 * The group as a hook sees it when its members were left out: reading `members` fails the decision
 * with the reason (CloudFactMissingError), where an absent list would read as a group with no members.
 * The accessor is not enumerable: copies and JSON of the group leave it out as the snapshot did.
 */
function withoutMembers(group: ServerGroupFact): ServerGroupFact {
  return Object.defineProperty({ ...group }, 'members', {
    enumerable: false,
    get(): never {
      throw new CloudFactMissingError('server_groups[].members');
    },
  });
}
