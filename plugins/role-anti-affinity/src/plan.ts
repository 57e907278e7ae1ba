import { NodeSnapshot, countGroupMembers } from '@trellis/policies';

/** Where a node's roles may be declared; the node's own metadata wins over its profile's. */
export type RolesSource = 'node' | 'profile' | 'none';

export interface NodeRoles {
  roles: string[];
  source: RolesSource;
}

/** A roles value that is present but not a comma-separated string; `path` names it for the message. */
export class RolesFormatError extends Error {
  constructor(
    readonly path: string,
    value: unknown,
  ) {
    super(`${path}: must be a comma-separated string of role names, not ${JSON.stringify(value)}.`);
    this.name = 'RolesFormatError';
  }
}

/**
 * `"db, cache,"` → `['db', 'cache']`. Nova metadata values are strings, so a comma-separated string
 * is the only form a profile or node can carry; anything else is refused rather than ignored, since
 * ignoring it would silently drop a node out of anti-affinity.
 */
export function parseRoles(value: unknown, path: string): string[] {
  if (typeof value !== 'string') throw new RolesFormatError(path, value);
  const roles: string[] = [];
  for (const part of value.split(',')) {
    const role = part.trim();
    if (role && !roles.includes(role)) roles.push(role);
  }
  return roles;
}

function metadataRoles(metadata: unknown, path: string): string[] | undefined {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return undefined;
  if (!Object.prototype.hasOwnProperty.call(metadata, 'roles')) return undefined;
  return parseRoles((metadata as Record<string, unknown>).roles, `${path}.roles`);
}

/** Roles the profile gives its servers: `spec.properties.metadata.roles`. */
export function profileRoles(profileSpec: Record<string, unknown> | null | undefined): NodeRoles {
  const props = profileSpec?.properties as Record<string, unknown> | undefined;
  const roles = metadataRoles(props?.metadata, 'cluster.profile.spec.properties.metadata');
  return roles === undefined ? { roles: [], source: 'none' } : { roles, source: 'profile' };
}

/**
 * A node's roles: its own `metadata.roles` when it has that key (an empty string there removes every
 * role the profile gives), else the profile's. Node metadata is not part of the framework's
 * NodeSnapshot type, so it is read from the snapshot as given.
 */
export function nodeRoles(node: NodeSnapshot, profile: NodeRoles): NodeRoles {
  const own = metadataRoles((node as NodeSnapshot & { metadata?: unknown }).metadata, `node ${node.id} metadata`);
  return own === undefined ? profile : { roles: own, source: 'node' };
}

export function bearsRole(roles: readonly string[], listed: ReadonlySet<string>): boolean {
  for (const role of roles) if (listed.has(role)) return true;
  return false;
}

/** `<cluster-name>-aa-<i>`, i from 1 (Sahara named its groups `<cluster>-aa-group-<i>`). */
export function groupName(clusterName: string, i: number): string {
  return `${clusterName}-aa-${i}`;
}

/** Nodes already recorded in each group, in the groups' order (of a summarised cluster: serverGroupMembers). */
export function membersPerGroup(nodes: readonly NodeSnapshot[], groupIds: readonly string[], exclude: string | null = null): number[] {
  return countGroupMembers(nodes, groupIds, exclude);
}

/**
 * Round robin that continues from the existing members: each role-bearing new node goes to the group
 * with the fewest members so far (ties to the lower index). With balanced groups this is plain round
 * robin; after a scale-in emptied one group it refills that group first, which keeps every group's
 * need for distinct hosts as small as possible. Non-role nodes get null.
 */
export function assignGroups(groupIds: readonly string[], existing: readonly number[], bearsRoleFlags: readonly boolean[]): Array<string | null> {
  const counts = [...existing];
  return bearsRoleFlags.map((bears) => {
    if (!bears) return null;
    let best = 0;
    for (let j = 1; j < counts.length; j++) if (counts[j] < counts[best]) best = j;
    counts[best]++;
    return groupIds[best];
  });
}
