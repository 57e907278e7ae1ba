import type { ServerCreateDto } from '@trellis/contracts';
import { trellisMetadata, type ServerCreateRequest } from '@trellis/nova';

type Networks = ServerCreateRequest['networks'];

/**
 * The os.nova.server profile's `networks` (Senlin: a list of {network, port, fixed_ip, ...}) in the
 * shape Nova's create call wants. No networks at all means `"none"`: from compute 2.37 on Nova
 * requires the key, and a server without NICs is what a profile without networks asks for.
 */
export function toNovaNetworks(networks: unknown): Networks {
  if (networks === 'none' || networks === 'auto') return networks;
  if (!Array.isArray(networks) || networks.length === 0) return 'none';
  return networks.map((n: Record<string, unknown>) => {
    const out: Record<string, string> = {};
    if (typeof n.network === 'string') out.uuid = n.network;
    if (typeof n.port === 'string') out.port = n.port;
    if (typeof n.fixed_ip === 'string') out.fixed_ip = n.fixed_ip;
    return out;
  });
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = String(v);
  }
  return out;
}

/**
 * Build Nova's create request for one decided node: the profile's properties, with the placement
 * decided by the policies on top (the placement zone overrides the profile's availability_zone and
 * the policy's server group overrides a `group` hint of the profile, as Senlin's nova profile did).
 * `p` is the profile's properties the server boots from (serverProfile(): the order's, or in an
 * order of schema_version 1, the server's own).
 */
export function buildServerRequest(
  create: ServerCreateDto,
  p: Record<string, unknown>,
  ids: { clusterId: string | null; actionId: string },
  resolveGroup: (ref: string) => string,
): ServerCreateRequest {
  const hints: Record<string, unknown> = { ...((p.scheduler_hints as Record<string, unknown>) ?? {}) };
  if (create.placement.servergroup) hints.group = resolveGroup(create.placement.servergroup);
  const zone = create.placement.zone ?? (typeof p.availability_zone === 'string' ? p.availability_zone : undefined);
  const metadata: Record<string, string> = {
    ...stringMap(p.metadata),
    ...(create.metadata ?? {}),
    ...trellisMetadata({ actionId: ids.actionId, nodeId: create.node_id, clusterId: ids.clusterId }),
  };
  const request: ServerCreateRequest = {
    name: typeof p.name === 'string' && p.name ? p.name : create.name,
    imageRef: String(p.image ?? ''),
    flavorRef: String(p.flavor ?? ''),
    networks: toNovaNetworks(p.networks),
    metadata,
  };
  if (zone) request.availabilityZone = zone;
  if (Object.keys(hints).length) request.schedulerHints = hints;
  if (typeof p.key_name === 'string') request.keyName = p.key_name;
  if (typeof p.user_data === 'string') request.userData = p.user_data;
  return request;
}
