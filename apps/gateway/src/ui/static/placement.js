// @ts-check
/**
 * The placement map of a cluster, from what the API shows the caller: availability zones as
 * columns, hosts as rows, each node in the cell of its zone and host (data.placement, which the
 * nova-worker records from Nova: a host name for an admin, Nova's hostId for a member), the server
 * groups from the latest decision's snapshot and the policies' binding data, and the weights of an
 * attached zone placement policy beside the real counts.
 */

const ZONE_PLACEMENT = 'senlin.policy.zone_placement';
const DEFAULT_WEIGHT = 100;

/**
 * @typedef {{id: string, name: string, status: string, role: string, group: string}} MapNode
 * @typedef {{name: string, count: number, weight: number | null, share: number | null, expected: number | null}} MapZone
 * @typedef {{host: string, cells: Record<string, MapNode[]>}} MapRow
 * @typedef {{id: string, name: string, policy: string, members: number}} MapGroup
 * @typedef {{zones: MapZone[], rows: MapRow[], groups: MapGroup[], total: number, weighted: string | null, otherHosts: string[]}} PlacementMap
 */

/** @param {unknown} z an entry of cloud.availability_zones: a name or Nova's `{zoneName}` */
const zoneName = (z) => (typeof z === 'string' ? z : /** @type {any} */ (z)?.zoneName ?? '');

/**
 * @param {{
 *   nodes: any[],
 *   bindings: any[],
 *   policies: Map<string, any>,
 *   decision: any,
 * }} input nodes: GET /v1/nodes?cluster_id; bindings: GET /v1/clusters/{id}/policies; policies: the
 *   attached policies by id (GET /v1/policies/{id}); decision: the latest stored decision, or null
 * @returns {PlacementMap}
 */
export function placementMap({ nodes, bindings, policies, decision }) {
  const cloud = decision?.input?.cloud ?? {};
  const groups = serverGroups(cloud.server_groups ?? [], bindings, policies);
  const profileRoles = decision?.input?.cluster?.profile?.spec?.properties?.metadata?.roles;

  const weights = zoneWeights(bindings, policies);
  const zoneNames = new Set([...(cloud.availability_zones ?? []).map(zoneName), ...(weights?.zones.keys() ?? [])]);
  /** @type {Map<string, MapRow>} */
  const rows = new Map();
  for (const n of nodes) {
    const placement = n.data?.placement ?? {};
    const zone = placement.zone ?? '';
    const host = placement.host ?? '';
    zoneNames.add(zone);
    /** @type {MapRow} */
    const row = rows.get(host) ?? { host, cells: {} };
    rows.set(host, row);
    const group = placement.servergroup ? groups.get(placement.servergroup) : undefined;
    (row.cells[zone] ??= []).push({
      id: n.id,
      name: n.name,
      status: n.status,
      role: n.role ?? n.metadata?.roles ?? profileRoles ?? '',
      group: group ? group.name : (placement.servergroup ?? ''),
    });
  }
  zoneNames.delete('');
  const countIn = (/** @type {string} */ zone) => nodes.filter((n) => (n.data?.placement?.zone ?? '') === zone).length;
  const total = nodes.length;
  const weightSum = weights ? [...weights.zones.values()].reduce((a, b) => a + b, 0) : 0;
  /** @type {MapZone[]} */
  const zones = [...zoneNames].sort().map((name) => {
    const weight = weights ? (weights.zones.get(name) ?? 0) : null;
    const share = weight !== null && weightSum > 0 ? weight / weightSum : null;
    return { name, count: countIn(name), weight, share, expected: share === null ? null : share * total };
  });
  // nodes not placed yet (CREATING) have no zone: a column of their own
  if (countIn('')) zones.push({ name: '', count: countIn(''), weight: null, share: null, expected: null });

  const seen = new Set(rows.keys());
  const hypervisors = (cloud.hypervisors ?? []).map((/** @type {any} */ h) => h.service?.host ?? h.hypervisor_hostname).filter(Boolean);
  return {
    zones,
    rows: [...rows.values()].sort((a, b) => rowOrder(a, zones) - rowOrder(b, zones) || (a.host === '' ? 1 : b.host === '' ? -1 : a.host.localeCompare(b.host))),
    groups: [...groups.values()].map((g) => ({ ...g, members: nodes.filter((n) => n.data?.placement?.servergroup === g.id).length })),
    total,
    weighted: weights?.policy ?? null,
    otherHosts: [...new Set(hypervisors)].filter((h) => !seen.has(h)).sort(),
  };
}

/** a row sorts under the first zone it has a node in */
function rowOrder(/** @type {MapRow} */ row, /** @type {MapZone[]} */ zones) {
  const i = zones.findIndex((z) => row.cells[z.name]?.length);
  return i === -1 ? zones.length : i;
}

/**
 * The weights of the first enabled zone placement policy: `{policy: name, zones: name → weight}`.
 * @param {any[]} bindings @param {Map<string, any>} policies
 */
function zoneWeights(bindings, policies) {
  const binding = bindings.find((b) => b.enabled && String(b.policy_type).startsWith(ZONE_PLACEMENT));
  const spec = binding ? policies.get(binding.policy_id)?.spec : null;
  if (!binding || !spec) return null;
  /** @type {Map<string, number>} */
  const zones = new Map((spec.properties?.zones ?? []).map((/** @type {any} */ z) => [z.name, typeof z.weight === 'number' ? z.weight : DEFAULT_WEIGHT]));
  return { policy: binding.policy_name, zones };
}

/**
 * The server groups the cluster uses, by id: Nova's view in the decision's snapshot first, then what
 * the policies recorded (role anti-affinity's groups, affinity's group with its spec's policy).
 * @param {any[]} snapshotGroups @param {any[]} bindings @param {Map<string, any>} policies
 * @returns {Map<string, {id: string, name: string, policy: string}>}
 */
function serverGroups(snapshotGroups, bindings, policies) {
  /** @type {Map<string, {id: string, name: string, policy: string}>} */
  const groups = new Map();
  const add = (/** @type {string} */ id, /** @type {string} */ name, /** @type {string} */ policy) => {
    if (id && !groups.has(id)) groups.set(id, { id, name: name || id.slice(0, 8), policy: policy || '' });
  };
  for (const g of snapshotGroups) add(g.id, g.name, g.policy ?? (g.policies ?? [])[0]);
  for (const b of bindings) {
    const role = b.data?.RoleAntiAffinityPolicy?.data;
    for (const g of role?.groups ?? []) add(g.id, g.name, role.policy);
    const affinity = b.data?.AffinityPolicy?.data;
    if (affinity?.servergroup_id) {
      const sg = policies.get(b.policy_id)?.spec?.properties?.servergroup ?? {};
      add(affinity.servergroup_id, sg.name ?? '', sg.policies ?? 'anti-affinity');
    }
  }
  return groups;
}
