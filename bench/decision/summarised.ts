import { EvaluationInput, summariseNodes, timestampMillis, victimListing } from '@trellis/policies';

/**
 * The snapshot as the engine's loader summarises it (libs/decisions load-snapshot.ts): counts per
 * zone, and only the nodes a victim selection may need, as deep per zone as the action can ask for
 * (each zone its own share, when a zone placement plan bounds it).
 */
export function summarisedSnapshot(full: EvaluationInput): { input: EvaluationInput; depth: number | Record<string, number> } {
  const cluster = full.cluster!;
  const nodes = cluster.nodes ?? [];
  const listing = victimListing(
    { action: full.action!.action!, inputs: full.action!.inputs ?? {} },
    full.policies ?? [],
    { min_size: cluster.min_size ?? 0, max_size: cluster.max_size ?? -1, desired_capacity: cluster.desired_capacity ?? nodes.length },
    nodes.length,
    { zones: summariseNodes(nodes, { listed: 0, orders: [] }, timestampMillis).summary.zones, cloud: full.cloud },
  );
  // a random pick needs every node: the loader then lists them all, without a summary
  if (!listing) return { input: full, depth: nodes.length };
  const summarised = summariseNodes(nodes, listing, timestampMillis);
  const depth = listing.zones ? { ...Object.fromEntries(listing.zones), '(no zone)': listing.listed } : listing.listed;
  return { input: { ...full, cluster: { ...cluster, nodes: summarised.nodes, summary: summarised.summary } }, depth };
}
