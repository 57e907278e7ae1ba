import {
  AllowedValues,
  AttachContext,
  AttachResult,
  DetachContext,
  DetachResult,
  DriftContext,
  GroupToRecreate,
  HookContext,
  InvalidSpecError,
  Policy,
  PolicyDriftFinding,
  PolicyType,
  Schema,
  ServerGroupFact,
  nodeCount,
  parseResizeParams,
  pyInt,
  requireIds,
  serverGroupMembers,
  serverGroupPolicy,
} from '@trellis/policies';
import { ANTI_AFFINITY_POLICIES, AntiAffinityPolicy, BINDING_KEY, BINDING_VERSION, BoundGroup, readBindingData } from './binding-data';
import { clusterDrift, groupToRecreate, withRecreatedGroups } from './cluster-drift';
import { RolesFormatError, assignGroups, bearsRole, groupName, nodeRoles, profileRoles } from './plan';

export const ROLE_ANTI_AFFINITY_TYPE = 'trellis.policy.role_anti_affinity';

/** Each group needs its own set of distinct hosts and counts against Nova's server_groups quota (10 by default). */
export const MAX_RATIO = 100;

export interface RoleAntiAffinityProperties {
  roles: string[];
  ratio: number;
  policy: AntiAffinityPolicy;
}

/** A property problem, with the path it concerns. */
interface PropertyProblem {
  path: string;
  message: string;
}

/**
 * trellis.policy.role_anti_affinity-1.0 (issue 6): nodes bearing any of `roles` are spread over
 * `ratio` anti-affinity server groups, so no two of them in one group share a host. Sahara's
 * anti_affinity/anti_affinity_ratio, as a policy: a server belongs to one group only, so every
 * role-bearing node of the cluster shares the same groups whatever its role.
 */
@PolicyType({
  name: ROLE_ANTI_AFFINITY_TYPE,
  versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2025.01' }] },
  profileTypes: ['os.nova.server-1.0'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_OUT'],
    ['BEFORE', 'CLUSTER_RESIZE'],
    ['BEFORE', 'NODE_CREATE'],
  ],
  // Same as affinity: both choose the group of new nodes and run beside zone placement.
  priority: 300,
  singleton: true,
  hooks: ['validate', 'attach', 'detach', 'pre_op', 'drift'],
  bindingKey: BINDING_KEY,
  readsHypervisors: false,
  readsGroupMembers: false,
  // pre_op counts the members of each group and the cluster's nodes, never lists them
  summarised: true,
  version: BINDING_VERSION,
  properties: {
    roles: Schema.List({
      description: 'Node roles whose nodes must not share a host (profile or node metadata `roles`, comma-separated).',
      required: true,
      schema: Schema.String({ description: 'A role name.' }),
    }),
    ratio: Schema.Integer({
      description: 'Number of anti-affinity server groups the role-bearing nodes are spread over, round robin.',
      default: 1,
    }),
    policy: Schema.String({
      description: 'Nova server group policy of the groups.',
      default: 'anti-affinity',
      constraints: [new AllowedValues(ANTI_AFFINITY_POLICIES)],
    }),
  },
})
export class RoleAntiAffinityPolicy extends Policy<RoleAntiAffinityProperties> {
  // set at construction, filled on first use: one shape for every instance (as the built-in policies do)
  private listed: Set<string> | undefined = undefined;

  /** The listed roles, trimmed as profile roles are. */
  get roleSet(): ReadonlySet<string> {
    return (this.listed ??= new Set(this.properties.roles.map((r) => r.trim())));
  }

  /** Server groups and hosts change behind Trellis's back: a scaling action looks at the cloud again first. */
  override get driftReadsCloud(): boolean {
    return true;
  }

  override detectDrift(ctx: DriftContext): PolicyDriftFinding[] {
    // the roles as the spec lists them; clusterDrift trims them as roleSet does
    return clusterDrift(ctx, (this.spec.properties as { roles?: unknown } | undefined)?.roles);
  }

  override groupToRecreate(bindingData: Record<string, unknown> | null, groupId: string, clusterName: string): GroupToRecreate {
    return groupToRecreate(bindingData, groupId, clusterName);
  }

  override withRecreatedGroups(bindingData: Record<string, unknown> | null, recreated: ReadonlyMap<string, string>): Record<string, unknown> {
    return withRecreatedGroups(bindingData, recreated);
  }

  override validate(): void {
    const problem = this.propertyProblem();
    if (problem) throw new InvalidSpecError(problem.message, problem.path);
  }

  override attach(ctx: AttachContext): AttachResult {
    const base = super.attach(ctx);
    if (!base.ok) return base;
    const problem = this.propertyProblem();
    if (problem) return { ok: false, message: problem.message };

    const affinity = ctx.attached.find((a) => a.type.startsWith('senlin.policy.affinity-'));
    if (affinity) {
      return {
        ok: false,
        message:
          `The role anti-affinity policy cannot be attached beside the affinity policy '${affinity.name ?? affinity.id}': ` +
          'Nova allows one server group per server, and both policies would choose the server group of new nodes.',
      };
    }
    const cluster = ctx.cluster.name || ctx.cluster.id;
    if (!cluster) return { ok: false, message: 'The cluster has neither a name nor an id to name its server groups after.' };

    const policy = this.properties.policy;
    const groups: BoundGroup[] = [];
    for (let i = 1; i <= this.properties.ratio; i++) {
      const name = groupName(cluster, i);
      let found: ServerGroupFact | null;
      try {
        found = ctx.cloud.findServerGroup(name);
      } catch (e) {
        return { ok: false, message: `Failed in retrieving servergroup '${name}': ${(e as Error).message}` };
      }
      // findServerGroup also matches ids; only a group of that very name is this cluster's group.
      if (found && found.name === name) {
        const existing = serverGroupPolicy(found);
        if (existing !== policy) {
          return {
            ok: false,
            message: `The server group '${name}' exists with the policy '${existing ?? 'None'}', not '${policy}'; delete or rename it first.`,
          };
        }
        groups.push({ id: found.id, name, created: false });
        continue;
      }
      let created: ServerGroupFact;
      try {
        created = ctx.cloud.createServerGroup(name, policy, null);
      } catch (e) {
        return { ok: false, message: `Failed in creating servergroup '${name}': ${(e as Error).message}` };
      }
      groups.push({ id: created.id, name, created: true });
    }
    return { ok: true, data: this.buildBindingData({ policy, groups }) };
  }

  override detach(ctx: DetachContext): DetachResult {
    const data = readBindingData(ctx.binding?.data);
    // Nothing was recorded, so nothing of ours exists to delete (as affinity's detach).
    if (typeof data === 'string') return { ok: true, message: 'No server group recorded; nothing deleted.' };
    const deleted: string[] = [];
    for (const group of data.groups) {
      if (!group.created) continue;
      try {
        ctx.cloud.deleteServerGroup(group.id);
      } catch (e) {
        return { ok: false, message: `Failed in deleting servergroup '${group.name || group.id}': ${(e as Error).message}` };
      }
      deleted.push(group.name || group.id);
    }
    const kept = data.groups.length - deleted.length;
    return {
      ok: true,
      message: `Deleted ${deleted.length} server group(s)${deleted.length ? ` (${deleted.join(', ')})` : ''}` + (kept ? `; kept ${kept} that existed before attach.` : '.'),
    };
  }

  override preOp(ctx: HookContext): string | void {
    const { action, cluster } = ctx;
    const data = action.data;
    const fail = (reason: string): void => {
      data.status = 'ERROR';
      data.reason = reason;
    };
    const problem = this.propertyProblem();
    if (problem) return fail(problem.message);

    const counted = newNodeCount(ctx);
    if (typeof counted === 'string') return counted;
    if ('error' in counted) return fail(counted.error);
    const { count } = counted;
    if (count === 0) return 'no new node: nothing to place';

    const bound = readBindingData(ctx.binding.data);
    if (typeof bound === 'string') return fail(bound);
    const groupIds = bound.groups.map((g) => g.id);

    const target = action.action === 'NODE_CREATE' ? action.target : null;
    let flags: boolean[];
    try {
      const fromProfile = profileRoles(cluster.profile.spec);
      const targetNode = target ? cluster.nodes.find((n) => n.id === target) : undefined;
      // a summarised cluster may not list it: then every node is read (IncompleteSnapshotError)
      if (target && !targetNode) requireIds(cluster, [target]);
      // New nodes carry the profile's metadata; only NODE_CREATE's node exists already with its own.
      const roles = targetNode ? nodeRoles(targetNode, fromProfile) : fromProfile;
      flags = new Array<boolean>(count).fill(bearsRole(roles.roles, this.roleSet));
    } catch (e) {
      if (e instanceof RolesFormatError) return fail(e.message);
      throw e;
    }
    if (!flags.some(Boolean)) return `none of the ${count} new node(s) bears a role of [${[...this.roleSet].join(', ')}]: no server group`;

    const assigned = assignGroups(groupIds, serverGroupMembers(cluster, groupIds, target), flags);
    const placement = data.placement as Record<string, unknown> | null | undefined;
    const earlier = Array.isArray(placement?.placements) ? (placement?.placements as unknown[]) : [];
    const placements = assigned.map((group, i) => {
      const prior = earlier[i];
      const entry: Record<string, unknown> = prior && typeof prior === 'object' && !Array.isArray(prior) ? { ...prior } : {};
      if (group !== null) entry.servergroup = group;
      return entry;
    });
    data.placement = { ...placement, count, placements };
    return `servergroups ${assigned.map((g) => g ?? '-').join(', ')} for ${count} new node(s)`;
  }

  /**
   * validate runs at policy create only; a snapshot handed to evaluate() never went through it, so
   * attach and pre_op check again instead of dividing by a zero ratio or matching a blank role.
   */
  private propertyProblem(): PropertyProblem | null {
    const raw = this.spec.properties;
    if (!Array.isArray(raw.roles)) {
      return { path: 'properties.roles', message: `properties.roles: must be a list of role names, not ${JSON.stringify(raw.roles)}.` };
    }
    if (raw.roles.length === 0) return { path: 'properties.roles', message: 'properties.roles: name at least one role.' };
    const seen = new Set<string>();
    for (let i = 0; i < raw.roles.length; i++) {
      const path = `properties.roles[${i}]`;
      const role = raw.roles[i];
      if (typeof role !== 'string' || !role.trim()) {
        return { path, message: `${path}: a role must be a non-empty string, not ${JSON.stringify(role)}.` };
      }
      if (role.includes(',')) {
        return { path, message: `${path}: '${role}' contains a comma, which separates roles in metadata; list each role on its own.` };
      }
      if (seen.has(role.trim())) return { path, message: `${path}: the role '${role.trim()}' is listed more than once.` };
      seen.add(role.trim());
    }
    const ratio = raw.ratio;
    const integral = ratio === undefined || (typeof ratio === 'number' ? Number.isInteger(ratio) : pyInt(ratio) !== undefined);
    const value = this.properties.ratio;
    if (!integral || value < 1 || value > MAX_RATIO) {
      return {
        path: 'properties.ratio',
        message: `properties.ratio: must be an integer from 1 to ${MAX_RATIO}, not ${JSON.stringify(ratio ?? value)}.`,
      };
    }
    return null;
  }
}

/**
 * How many nodes the action creates, read as the affinity policy reads it: `data.creation` from an
 * earlier policy, else the action's own count; a resize is parsed here when no policy did yet.
 * A string is a trace note (nothing to place; the engine reports a count that is not one).
 */
function newNodeCount(ctx: HookContext): { count: number } | { error: string } | string {
  const { action, cluster } = ctx;
  const data = action.data;
  let raw: unknown;
  const creation = data.creation as Record<string, unknown> | null | undefined;
  if (creation !== undefined && creation !== null) raw = creation.count ?? 1;
  else if (action.action === 'CLUSTER_SCALE_OUT') raw = action.inputs.count ?? 1;
  else if (action.action === 'NODE_CREATE') raw = 1;
  else {
    const result = parseResizeParams(action.inputs, data, cluster, nodeCount(cluster), ctx.maxNodesPerCluster);
    if (!result.ok) return { error: result.reason };
    const after = data.creation as Record<string, unknown> | undefined;
    if (!after) return 'the resize shrinks the cluster: nothing to place';
    raw = after.count;
  }
  const count = pyInt(raw);
  if (count === undefined || count < 0) return `count ${String(raw)} is not a node count: nothing placed`;
  // The engine refuses such a size itself; a placement list that long is not worth building first.
  if (count > ctx.maxNodesPerCluster) return `count ${count} exceeds the ${ctx.maxNodesPerCluster} nodes a cluster may have: nothing placed`;
  return { count };
}
