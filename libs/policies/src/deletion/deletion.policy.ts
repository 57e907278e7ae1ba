import { clonePlain, withKeys } from '../framework/plain-data';
import { HookContext, Policy, PolicyType } from '../framework/policy';
import { parseResizeParams } from '../resize/resize';
import { zoneIndexFor } from '../resize/zone-index';
import { AllowedValues, Schema, pyInt } from '../schema/schema';
import { DELETION_CRITERIA, DeletionCriteria, pickVictims, pickVictimsByZone, victimOrder } from './plan';
import { nodeCount, requireListed } from '../framework/summary';

export interface DeletionProperties {
  criteria: DeletionCriteria;
  destroy_after_deletion: boolean;
  grace_period: number;
  reduce_desired_capacity: boolean;
  hooks: Record<string, unknown>;
}

/**
 * senlin.policy.deletion-1.0 and -1.1, one class as in Senlin (senlin-behaviour §8). Region plans are
 * not produced by any policy Trellis ships, so only zone plans are honoured.
 */
@PolicyType({
  name: 'senlin.policy.deletion',
  versions: {
    '1.0': [{ status: 'SUPPORTED', since: '2016.04' }],
    '1.1': [{ status: 'SUPPORTED', since: '2018.01' }],
  },
  version: '1.1',
  profileTypes: ['ANY'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_IN'],
    ['BEFORE', 'CLUSTER_DEL_NODES'],
    ['BEFORE', 'CLUSTER_RESIZE'],
    ['BEFORE', 'NODE_DELETE'],
  ],
  priority: 400,
  hooks: ['pre_op'],
  bindingKey: 'DeletionPolicy',
  readsHypervisors: false,
  readsGroupMembers: false,
  properties: {
    criteria: Schema.String({
      description: 'Criteria used in selecting candidates for deletion',
      default: 'RANDOM',
      constraints: [new AllowedValues(DELETION_CRITERIA)],
    }),
    destroy_after_deletion: Schema.Boolean({
      description: 'Whether a node should be completely destroyed after deletion. Default to True',
      default: true,
    }),
    grace_period: Schema.Integer({ description: 'Number of seconds before real deletion happens.', default: 0 }),
    reduce_desired_capacity: Schema.Boolean({
      description: 'Whether the desired capacity of the cluster should be reduced along the deletion. Default to True.',
      default: true,
    }),
    hooks: Schema.Map({
      description: 'Lifecycle hook properties',
      schema: {
        type: Schema.String({
          description: 'Type of lifecycle hook',
          default: 'zaqar',
          constraints: [new AllowedValues(['zaqar', 'webhook'])],
        }),
        params: Schema.Map({
          schema: {
            queue: Schema.String({ description: 'Zaqar queue to receive lifecycle hook message', default: '' }),
            url: Schema.String({ description: 'Url sink to which to send lifecycle hook message', default: '' }),
          },
          default: {},
        }),
        timeout: Schema.Integer({ description: 'Number of seconds before actual deletion happens.', default: 0 }),
      },
      default: {},
    }),
  },
})
export class DeletionPolicy extends Policy<DeletionProperties> {
  override preOp(ctx: HookContext): string | void {
    const { action, cluster } = ctx;
    const data = action.data;
    const candidates = action.inputs.candidates;
    if (Array.isArray(candidates) && candidates.length > 0) return this.update(ctx, candidates.map(String));
    if (action.action === 'NODE_DELETE') return this.update(ctx, action.target ? [action.target] : []);

    data.status = 'OK';
    data.reason = 'lifecycle hook parameters saved';
    data.hooks = clonePlain(this.properties.hooks ?? {});

    const deletion = data.deletion as Record<string, unknown> | null | undefined;
    let count: number;
    let zones: Record<string, unknown> | null = null;
    if (deletion && Object.keys(deletion).length > 0) {
      count = pyInt(deletion.count) ?? 0;
      if (deletion.zones && typeof deletion.zones === 'object') zones = deletion.zones as Record<string, unknown>;
    } else if (action.action === 'CLUSTER_SCALE_IN') {
      count = pyInt(action.inputs.count ?? 1) ?? 0;
    } else {
      const result = parseResizeParams(action.inputs, data, cluster, nodeCount(cluster), ctx.maxNodesPerCluster);
      if (!result.ok) {
        data.status = 'ERROR';
        data.reason = result.reason;
        return;
      }
      const after = data.deletion as Record<string, unknown> | undefined;
      if (!after) return 'the resize does not shrink the cluster: no victims';
      count = pyInt(after.count) ?? 0;
    }

    const criteria = this.properties.criteria;
    if (zones && Object.keys(zones).length > 0) {
      return this.update(ctx, pickVictimsByZone(cluster.nodes, zones, criteria, ctx.random, zoneIndexFor(ctx.zones, cluster.nodes), cluster));
    }
    count = Math.max(0, Math.min(count, nodeCount(cluster)));
    requireListed(cluster, undefined, cluster.nodes, count, victimOrder(criteria));
    return this.update(ctx, pickVictims(cluster.nodes, count, criteria, ctx.random));
  }

  private update(ctx: HookContext, victims: string[]): string {
    const data = ctx.action.data;
    const p = this.properties;
    data.deletion = withKeys(data.deletion, {
      count: victims.length,
      candidates: victims,
      destroy_after_deletion: p.destroy_after_deletion,
      grace_period: p.grace_period,
      reduce_desired_capacity: p.reduce_desired_capacity,
    });
    data.status = 'OK';
    data.reason = 'Candidates generated';
    // one victim (a scale-in by 1) is the note itself: join is a runtime call
    if (victims.length === 1 && typeof victims[0] === 'string' && victims[0] !== '') return `candidates ${victims[0]}`;
    return `candidates ${victims.join(', ') || '(none)'}`;
  }
}
