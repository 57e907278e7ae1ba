import { DriftContext, DriftCountsContext, PolicyDriftFinding } from '../framework/drift';
import { AttachContext, AttachResult, HookContext, InvalidSpecError, Policy, PolicyType, ValidateContext } from '../framework/policy';
import { withKeys } from '../framework/plain-data';
import { PolicyAction } from '../framework/types';
import { parseResizeParams } from '../resize/resize';
import { zoneIndexFor } from '../resize/zone-index';
import { nodeCount, summaryZoneCounts } from '../framework/summary';
import { pyRepr } from '../schema/py-format';
import { Schema, pyInt } from '../schema/schema';
import { zoneDrift, zoneDriftFromCounts } from './drift';
import { WeightedZone, createZonePlan, zoneDistribution } from './plan';

export interface ZonePlacementProperties {
  zones: Array<{ name: string | null; weight: number }> | null;
}

/** Decision 3: the affinity policy chooses zones too when it sets either of these. */
export function affinityChoosesZone(properties: Record<string, unknown> | null | undefined): boolean {
  return !!properties && (!!properties.availability_zone || properties.enable_drs_extension === true);
}

/** senlin.policy.zone_placement-1.0 (senlin-behaviour §5, decisions 1, 3, 11-13). */
@PolicyType({
  name: 'senlin.policy.zone_placement',
  versions: {
    '1.0': [
      { status: 'EXPERIMENTAL', since: '2016.04' },
      { status: 'SUPPORTED', since: '2016.10' },
    ],
  },
  profileTypes: ['os.nova.server-1.0'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_OUT'],
    ['BEFORE', 'CLUSTER_SCALE_IN'],
    ['BEFORE', 'CLUSTER_RESIZE'],
    ['BEFORE', 'NODE_CREATE'],
  ],
  priority: 300,
  hooks: ['validate', 'attach', 'pre_op', 'drift'],
  bindingKey: 'ZonePlacementPolicy',
  readsHypervisors: false,
  readsGroupMembers: false,
  properties: {
    zones: Schema.List({
      description: 'List of availability zones to choose from.',
      schema: Schema.Map({
        description: 'An availability zone as candidate.',
        schema: {
          name: Schema.String({ description: 'Name of an availability zone.' }),
          weight: Schema.Integer({ description: 'Weight of the availability zone (default is 100).', default: 100 }),
        },
      }),
    }),
  },
})
export class ZonePlacementPolicy extends Policy<ZonePlacementProperties> {
  // set at construction, filled on first use: one shape for every instance (see Policy.typeMeta)
  private weighted: WeightedZone[] | undefined = undefined;
  private names: string[] | undefined = undefined;

  /** name → weight in spec order (a duplicated name would keep its first position and last weight) */
  get zones(): WeightedZone[] {
    if (this.weighted) return this.weighted;
    const byName = new Map<string, number>();
    for (const z of this.properties.zones ?? []) byName.set(String(z.name), z.weight);
    this.weighted = [...byName].map(([name, weight]) => ({ name, weight }));
    this.names = this.weighted.map((z) => z.name);
    return this.weighted;
  }

  override detectDrift(ctx: DriftContext): PolicyDriftFinding[] {
    // the zones as the spec lists them: a bad entry is reported as unreadable, not resolved away
    return zoneDrift(ctx, this.spec.properties);
  }

  override detectDriftFromCounts(ctx: DriftCountsContext): PolicyDriftFinding[] | null {
    return zoneDriftFromCounts(ctx, this.spec.properties);
  }

  override validate(ctx: ValidateContext): void {
    const raw = this.spec.properties.zones;
    const resolved = this.properties.zones ?? [];
    const seen = new Set<string>();
    resolved.forEach((zone, i) => {
      const path = `properties.zones[${i}]`;
      if (zone.name === null || zone.name === '') {
        throw new InvalidSpecError(`${path}.name: every zone needs a name.`, `${path}.name`);
      }
      const rawWeight = Array.isArray(raw) ? (raw[i] as Record<string, unknown> | undefined)?.weight : undefined;
      const integral = rawWeight === undefined || (typeof rawWeight === 'number' ? Number.isInteger(rawWeight) : pyInt(rawWeight) !== undefined);
      if (!integral || zone.weight <= 0) {
        throw new InvalidSpecError(
          `${path}.weight: the weight of zone '${zone.name}' must be a positive integer, not ${pyRepr(rawWeight ?? zone.weight)}.`,
          `${path}.weight`,
        );
      }
      if (seen.has(zone.name)) {
        throw new InvalidSpecError(`${path}.name: the zone '${zone.name}' is listed more than once.`, `${path}.name`);
      }
      seen.add(zone.name);
    });
    if (!ctx.cloud) return;
    const names = [...seen].sort();
    const valid = new Set(ctx.cloud.validateAzs(names));
    const invalid = names.filter((n) => !valid.has(n));
    if (invalid.length > 0) throw new InvalidSpecError(`The specified name '${pyRepr(invalid)}' could not be found.`);
  }

  override attach(ctx: AttachContext): AttachResult {
    const base = super.attach(ctx);
    if (!base.ok) return base;
    const affinity = ctx.attached.find((a) => a.type.startsWith('senlin.policy.affinity-') && affinityChoosesZone(a.policy?.properties as Record<string, unknown>));
    if (affinity) {
      return {
        ok: false,
        message:
          `The zone placement policy conflicts with the attached affinity policy '${affinity.name ?? affinity.id}', ` +
          'which sets availability_zone or enable_drs_extension: both would choose the availability zone of new nodes.',
      };
    }
    return base;
  }

  override preOp(ctx: HookContext): string | void {
    const { action, cluster } = ctx;
    let count = this.count(ctx);
    if (count === 0 || Number.isNaN(count)) return;
    const expand = count > 0;
    if (!expand) {
      // Decision 13: a scale-in larger than the cluster is planned as removing every node.
      count = Math.min(-count, nodeCount(cluster));
      if (count === 0) return;
    }
    const data = action.data;
    const zones = this.zones;
    const good = ctx.cloud.validateAzs(this.names as string[]);
    if (good.length === 0) {
      data.status = 'ERROR';
      data.reason = 'No availability zone found available.';
      return;
    }
    const usable = good.length === zones.length ? zones : zones.filter((z) => good.includes(z.name));
    // A scale-in goes on to choose victims per zone and to map them to zones: the decision's zone
    // index reads every node's zone once for all three. A scale-out only needs the counts.
    // A summarised cluster comes with its counts per zone (the database counted them).
    const index = expand || cluster.summary ? null : zoneIndexFor(ctx.zones, cluster.nodes);
    const current = cluster.summary ? summaryZoneCounts(cluster.summary, good) : (index?.counts(good) ?? zoneDistribution(cluster.nodes, good));
    const plan = createZonePlan(current, usable, count, expand);
    if (!plan || Object.keys(plan).length === 0) {
      data.status = 'ERROR';
      data.reason = 'There is no feasible plan to handle all nodes.';
      return;
    }
    const key = expand ? 'creation' : 'deletion';
    data[key] = withKeys(data[key], { count, zones: plan });
    return `${expand ? 'create' : 'delete'} ${count}: ${planJson(plan)}`;
  }

  /** §5.2: positive = create, negative = delete, 0 = nothing to place (NaN: a count that is not an integer). */
  private count(ctx: HookContext): number {
    const { action, cluster } = ctx;
    const data = action.data;
    const int = (v: unknown, fallback: number) => (v === undefined || v === null ? fallback : (pyInt(v) ?? NaN));
    switch (action.action) {
      case 'NODE_CREATE': {
        const props = cluster.profile.spec.properties as Record<string, unknown> | undefined;
        return props?.availability_zone ? 0 : 1;
      }
      case 'CLUSTER_RESIZE': {
        const fromData = resizeCount(action);
        if (fromData !== undefined) return fromData;
        const result = parseResizeParams(action.inputs, data, cluster, nodeCount(cluster), ctx.maxNodesPerCluster);
        if (!result.ok) {
          data.status = 'ERROR';
          data.reason = result.reason;
          return 0;
        }
        return resizeCount(action) ?? 0;
      }
      case 'CLUSTER_SCALE_IN': {
        const pd = data.deletion as Record<string, unknown> | undefined | null;
        return -(pd === undefined || pd === null ? int(action.inputs.count, 1) : int(pd.count, 1));
      }
      default: {
        const pd = data.creation as Record<string, unknown> | undefined | null;
        return pd === undefined || pd === null ? int(action.inputs.count, 1) : int(pd.count, 1);
      }
    }
  }
}

/**
 * JSON.stringify(plan), written out when every zone name is printable ASCII without a quote or a
 * backslash (nothing to escape) and every count finite: the trace note of every decision.
 */
export function planJson(plan: Record<string, number>): string {
  let out = '{';
  for (const name of Object.keys(plan)) {
    const n = plan[name];
    if (typeof n !== 'number' || !Number.isFinite(n)) return JSON.stringify(plan);
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(plan);
    }
    out += `${out.length === 1 ? '' : ','}"${name}":${n}`;
  }
  return `${out}}`;
}

/** A resize already decided by an earlier policy: Python truthiness of the dicts, as Senlin tested them. */
function resizeCount(action: PolicyAction): number | undefined {
  const truthy = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && Object.keys(v).length > 0;
  const { deletion, creation } = action.data;
  if (truthy(deletion)) return -(pyInt(deletion.count) ?? NaN);
  if (truthy(creation)) return pyInt(creation.count) ?? NaN;
  return undefined;
}
