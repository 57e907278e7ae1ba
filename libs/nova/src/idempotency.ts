import type { NovaPort, Server } from './nova.port';

/** Server metadata keys that tie a Nova server to the Trellis action and node that booted it. */
export const TRELLIS_ACTION_KEY = 'trellis_action';
export const TRELLIS_NODE_KEY = 'trellis_node';
export const TRELLIS_CLUSTER_KEY = 'trellis_cluster';

export interface ServerTag {
  actionId: string;
  nodeId: string;
}

/** The metadata to boot a node's server with; findServerFor finds it again by the same tags. */
export function trellisMetadata(tag: ServerTag & { clusterId?: string | null }): Record<string, string> {
  const metadata: Record<string, string> = { [TRELLIS_ACTION_KEY]: tag.actionId, [TRELLIS_NODE_KEY]: tag.nodeId };
  if (tag.clusterId) metadata[TRELLIS_CLUSTER_KEY] = tag.clusterId;
  return metadata;
}

/** the tag a create request carries, or null when it has none */
export function tagOf(metadata: Record<string, string> | undefined): ServerTag | null {
  const actionId = metadata?.[TRELLIS_ACTION_KEY];
  const nodeId = metadata?.[TRELLIS_NODE_KEY];
  return actionId && nodeId ? { actionId, nodeId } : null;
}

/** Every server booted for this action and node (more than one only if something went wrong). */
export async function findServersFor(nova: NovaPort, tag: ServerTag): Promise<Server[]> {
  return nova.listServers({ metadata: { [TRELLIS_ACTION_KEY]: tag.actionId, [TRELLIS_NODE_KEY]: tag.nodeId } });
}

/**
 * The server already booted for this action and node, so that a redelivered work order never boots
 * a second one; null when there is none. Should there be several, one that is not in ERROR is
 * preferred, then the lowest id, so every caller picks the same.
 */
export async function findServerFor(nova: NovaPort, tag: ServerTag): Promise<Server | null> {
  const servers = await findServersFor(nova, tag);
  if (servers.length === 0) return null;
  const sorted = [...servers].sort((a, b) => Number(a.status === 'ERROR') - Number(b.status === 'ERROR') || a.id.localeCompare(b.id));
  return sorted[0];
}
