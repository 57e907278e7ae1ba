import { HookContext, InvalidSpecError, Policy, PolicyType, Schema, pyInt } from '@trellis/policies';
import { newNodeZones, zoneLoads } from './plan';

export interface MaxPerZoneProperties {
  max_nodes: number;
}

/**
 * acme.policy.max_per_zone-1.0: refuses an action that would put more than `max_nodes` nodes of the
 * cluster in one availability zone. It decides nothing itself; it checks the zones that zone
 * placement (or affinity's availability_zone) chose earlier in the chain, hence its priority.
 */
@PolicyType({
  name: 'acme.policy.max_per_zone',
  versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2025.01' }] },
  profileTypes: ['os.nova.server-1.0'],
  targets: [
    ['BEFORE', 'CLUSTER_SCALE_OUT'],
    ['BEFORE', 'CLUSTER_RESIZE'],
    ['BEFORE', 'NODE_CREATE'],
  ],
  // After zone placement and affinity (300), which write the zones it checks.
  priority: 350,
  singleton: true,
  hooks: ['validate', 'pre_op'],
  // it reads the nodes' zones, never Nova's hypervisors: its decisions are loaded without them
  readsHypervisors: false,
  readsGroupMembers: false,
  properties: {
    max_nodes: Schema.Integer({ description: 'Most nodes of the cluster one availability zone may hold.', required: true }),
  },
})
export class MaxPerZonePolicy extends Policy<MaxPerZoneProperties> {
  override validate(): void {
    const problem = this.problem();
    if (problem) throw new InvalidSpecError(problem, 'properties.max_nodes');
  }

  override preOp(ctx: HookContext): string | void {
    const data = ctx.action.data;
    // validate runs at policy create only; a hand-made snapshot may carry any value.
    const problem = this.problem();
    if (problem) {
      data.status = 'ERROR';
      data.reason = problem;
      return;
    }
    const count = newNodeCount(data);
    if (count === null) return 'no zone was chosen for new nodes: nothing to check';
    // The engine refuses such a size itself; no need to lay out that many zones first.
    if (count > ctx.maxNodesPerCluster) return `count ${count} exceeds the ${ctx.maxNodesPerCluster} nodes a cluster may have: nothing to check`;
    const loads = zoneLoads(ctx.cluster.nodes, newNodeZones(data, count));
    if (loads.length === 0) return 'no zone was chosen for new nodes: nothing to check';

    const max = this.properties.max_nodes;
    const over = loads.filter((l) => l.existing + l.added > max);
    if (over.length > 0) {
      data.status = 'ERROR';
      data.reason = over
        .map((l) => `zone '${l.zone}' would hold ${l.existing + l.added} nodes (${l.existing} + ${l.added} new), more than max_nodes ${max}`)
        .join('; ');
      return;
    }
    return loads.map((l) => `${l.zone} ${l.existing + l.added}/${max}`).join(', ');
  }

  private problem(): string | null {
    const raw = this.spec.properties.max_nodes;
    const integral = typeof raw === 'number' ? Number.isInteger(raw) : pyInt(raw) !== undefined;
    if (!integral || this.properties.max_nodes < 1) return `properties.max_nodes: must be a positive integer, not ${JSON.stringify(raw)}.`;
    return null;
  }
}

/** How many new nodes the zone decisions cover; null when no zone decision was written. */
function newNodeCount(data: Record<string, unknown>): number | null {
  const creation = data.creation as Record<string, unknown> | null | undefined;
  const placement = data.placement as Record<string, unknown> | null | undefined;
  if (creation && typeof creation === 'object') {
    const count = pyInt(creation.count ?? 1);
    return count !== undefined && count > 0 ? count : null;
  }
  if (placement && Array.isArray(placement.placements)) return placement.placements.length;
  return null;
}
