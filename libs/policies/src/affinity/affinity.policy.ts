import { ServerGroupFact, serverGroupPolicy } from '../framework/cloud';
import {
  AttachContext,
  AttachResult,
  DetachContext,
  DetachResult,
  HookContext,
  InvalidSpecError,
  Policy,
  PolicyType,
  ValidateContext,
} from '../framework/policy';
import { randomName } from '../framework/random';
import { parseResizeParams } from '../resize/resize';
import { nodeCount } from '../framework/summary';
import { AllowedValues, Schema, pyInt } from '../schema/schema';
import { PlacementEntry, affinityPlacements, chooseServerGroup, drsZone, pickDrsHypervisor } from './plan';

export const SERVER_GROUP_POLICIES = ['affinity', 'soft-affinity', 'anti-affinity', 'soft-anti-affinity'] as const;

export interface ServerGroupProperties {
  name: string | null;
  policies: string;
  rules: { max_server_per_host: number | null } | null;
}

export interface AffinityProperties {
  servergroup: ServerGroupProperties | null;
  availability_zone: string | null;
  enable_drs_extension: boolean;
}

export interface AffinityBindingData {
  inherited_group: boolean;
  servergroup_id: string;
}

const DETACH_OK = 'Servergroup resource deletion succeeded.';

/** senlin.policy.affinity-1.0 (senlin-behaviour §4, decisions 3, 5-10, 19). */
@PolicyType({
  name: 'senlin.policy.affinity',
  versions: { '1.0': [{ status: 'SUPPORTED', since: '2016.10' }] },
  profileTypes: ['os.nova.server-1.0'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_OUT'],
    ['BEFORE', 'CLUSTER_RESIZE'],
    ['BEFORE', 'NODE_CREATE'],
  ],
  priority: 300,
  hooks: ['validate', 'attach', 'detach', 'pre_op'],
  bindingKey: 'AffinityPolicy',
  // only with enable_drs_extension: readsHypervisors() and the loader's SQL know that of this type
  readsHypervisors: true,
  readsGroupMembers: false,
  properties: {
    servergroup: Schema.Map({
      description: 'Properties of the VM server group',
      schema: {
        name: Schema.String({ description: 'The name of the server group' }),
        policies: Schema.String({
          description: 'The server group policies.',
          default: 'affinity',
          constraints: [new AllowedValues(SERVER_GROUP_POLICIES)],
        }),
        rules: Schema.Map({
          description: "Rules of the server group (Nova 2.64 or later; only with the 'anti-affinity' policy).",
          schema: {
            max_server_per_host: Schema.Integer({ description: 'Maximum number of servers of the group on one host.' }),
          },
        }),
      },
    }),
    availability_zone: Schema.String({ description: 'Name of the availability zone to place the nodes.' }),
    enable_drs_extension: Schema.Boolean({ description: 'Enable vSphere DRS extension.', default: false }),
  },
})
export class AffinityPolicy extends Policy<AffinityProperties> {
  /** Decision 7: a spec without `servergroup` gets the group defaults (Senlin crashed). */
  get servergroup(): ServerGroupProperties {
    return this.properties.servergroup ?? { name: null, policies: 'affinity', rules: null };
  }

  /** Nova's rules for a new group: only a set max_server_per_host is sent. */
  get rules(): Record<string, unknown> | null {
    const max = this.servergroup.rules?.max_server_per_host;
    return max === null || max === undefined ? null : { max_server_per_host: max };
  }

  override validate(ctx: ValidateContext): void {
    const group = this.servergroup;
    const max = group.rules?.max_server_per_host;
    if (max !== null && max !== undefined) {
      if (max < 1) {
        throw new InvalidSpecError(
          `properties.servergroup.rules.max_server_per_host: must be a positive integer, not ${max}.`,
          'properties.servergroup.rules.max_server_per_host',
        );
      }
      if (group.policies !== 'anti-affinity') {
        throw new InvalidSpecError(
          `properties.servergroup.rules: Nova accepts server group rules only with the 'anti-affinity' policy, not '${group.policies}'.`,
          'properties.servergroup.rules',
        );
      }
    }
    const az = this.properties.availability_zone;
    if (!ctx.cloud || !az) return;
    if (ctx.cloud.validateAzs([az]).length === 0) {
      throw new InvalidSpecError(`The specified availability_zone '${az}' could not be found.`);
    }
  }

  override attach(ctx: AttachContext): AttachResult {
    const base = super.attach(ctx);
    if (!base.ok) return base;
    if (this.choosesZone()) {
      const zonePolicy = ctx.attached.find((a) => a.type.startsWith('senlin.policy.zone_placement-'));
      if (zonePolicy) {
        return {
          ok: false,
          message:
            `The affinity policy sets availability_zone or enable_drs_extension and conflicts with the attached zone ` +
            `placement policy '${zonePolicy.name ?? zonePolicy.id}': both would choose the availability zone of new nodes.`,
        };
      }
    }

    const group = this.servergroup;
    const choice = chooseServerGroup(ctx.cluster.profile.spec, group.name);
    if (choice.kind !== 'create') {
      const nameOrId = choice.kind === 'inherit' ? choice.nameOrId : choice.name;
      let found: ServerGroupFact | null;
      try {
        found = ctx.cloud.findServerGroup(nameOrId);
      } catch {
        return { ok: false, message: `Failed in retrieving servergroup '${nameOrId}'.` };
      }
      if (found) {
        const existing = serverGroupPolicy(found);
        if (existing !== group.policies) {
          return {
            ok: false,
            message: `Policies specified (${group.policies}) doesn't match that of the existing servergroup (${existing ?? 'None'}).`,
          };
        }
        return { ok: true, data: this.buildBindingData({ inherited_group: true, servergroup_id: found.id }) };
      }
      if (choice.kind === 'inherit') {
        return {
          ok: false,
          message: `The server group '${nameOrId}' named in the profile's scheduler_hints.group could not be found.`,
        };
      }
    }

    const name = choice.kind === 'find-or-create' ? choice.name : `server_group_${randomName(ctx.random)}`;
    let created: ServerGroupFact;
    try {
      created = ctx.cloud.createServerGroup(name, group.policies, this.rules);
    } catch {
      return { ok: false, message: 'Failed in creating servergroup.' };
    }
    return { ok: true, data: this.buildBindingData({ inherited_group: false, servergroup_id: created.id }) };
  }

  override detach(ctx: DetachContext): DetachResult {
    const data = this.readBindingData(ctx.binding?.data);
    const id = data?.servergroup_id;
    if (typeof id === 'string' && id && data?.inherited_group !== true) {
      try {
        ctx.cloud.deleteServerGroup(id);
      } catch {
        return { ok: false, message: 'Failed in deleting servergroup.' };
      }
    }
    return { ok: true, message: DETACH_OK };
  }

  override preOp(ctx: HookContext): string | void {
    const { action, cluster } = ctx;
    const data = action.data;
    const drs = this.properties.enable_drs_extension;
    let zone = this.properties.availability_zone || (drs ? 'nova' : null);

    let raw: unknown;
    const creation = data.creation as Record<string, unknown> | null | undefined;
    if (creation !== undefined && creation !== null) raw = creation.count ?? 1;
    else if (action.action === 'CLUSTER_SCALE_OUT') raw = action.inputs.count ?? 1;
    else if (action.action === 'NODE_CREATE') raw = 1;
    else {
      const result = parseResizeParams(action.inputs, data, cluster, nodeCount(cluster), ctx.maxNodesPerCluster);
      if (!result.ok) {
        // Decision 10: Senlin ignored the parser's verdict here.
        data.status = 'ERROR';
        data.reason = result.reason;
        return;
      }
      const after = data.creation as Record<string, unknown> | undefined;
      if (!after) return 'the resize shrinks the cluster: nothing to place';
      raw = after.count;
    }
    const count = pyInt(raw);
    // Not a usable count: the engine fails the action with its own "Invalid count" message.
    if (count === undefined || count < 0) return `count ${String(raw)} is not a node count: nothing placed`;

    const binding = this.readBindingData(ctx.binding.data);
    const groupId = binding?.servergroup_id;
    if (typeof groupId !== 'string' || !groupId) {
      data.status = 'ERROR';
      data.reason = 'The affinity policy has no server group recorded for this cluster; detach and attach it again.';
      return;
    }
    const entry: PlacementEntry = { servergroup: groupId };
    if (drs) {
      const hypervisor = pickDrsHypervisor(ctx.cloud.hypervisors());
      if (!hypervisor) {
        const reason = 'No suitable vSphere host is available.';
        data.status = 'ERROR';
        data.status_reason = reason;
        data.reason = reason;
        return;
      }
      zone = drsZone(zone as string, hypervisor);
    }
    if (zone) entry.zone = zone;
    data.placement = { count, placements: affinityPlacements(entry, count) };
    return `servergroup ${groupId}${zone ? `, zone ${zone}` : ''} for ${count} node(s)`;
  }

  private choosesZone(): boolean {
    return !!this.properties.availability_zone || this.properties.enable_drs_extension === true;
  }
}
