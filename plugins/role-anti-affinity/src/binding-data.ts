/** The key of this type's entry in binding data (`{"RoleAntiAffinityPolicy": {"version", "data"}}`). */
export const BINDING_KEY = 'RoleAntiAffinityPolicy';
export const BINDING_VERSION = '1.0';

export const ANTI_AFFINITY_POLICIES = ['anti-affinity', 'soft-anti-affinity'] as const;
export type AntiAffinityPolicy = (typeof ANTI_AFFINITY_POLICIES)[number];

export interface BoundGroup {
  id: string;
  name: string;
  /** false: the group existed before attach and detach leaves it in place */
  created: boolean;
}

export interface RoleAntiAffinityBindingData {
  policy: AntiAffinityPolicy;
  groups: BoundGroup[];
}

/**
 * This type's binding data, or a message naming what is wrong with it. Written by attach; read by
 * pre_op, detach and detectDrift, which must not trust a hand-edited snapshot more than attach did.
 */
export function readBindingData(bindingData: Record<string, unknown> | null | undefined): RoleAntiAffinityBindingData | string {
  const path = `binding_data.${BINDING_KEY}`;
  const entry = bindingData?.[BINDING_KEY] as { version?: unknown; data?: unknown } | undefined;
  if (!entry || typeof entry !== 'object') return `${path} is missing: the policy has no server groups recorded for this cluster; detach and attach it again.`;
  if (entry.version !== BINDING_VERSION) return `${path}.version: expected '${BINDING_VERSION}', not ${JSON.stringify(entry.version)}.`;
  const data = entry.data as Record<string, unknown> | null | undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return `${path}.data: must be an object.`;
  const policy = data.policy;
  if (!ANTI_AFFINITY_POLICIES.includes(policy as AntiAffinityPolicy)) {
    return `${path}.data.policy: must be one of ${ANTI_AFFINITY_POLICIES.join(', ')}, not ${JSON.stringify(policy)}.`;
  }
  if (!Array.isArray(data.groups) || data.groups.length === 0) return `${path}.data.groups: must be a non-empty list of server groups.`;
  const groups: BoundGroup[] = [];
  for (let i = 0; i < data.groups.length; i++) {
    const g = data.groups[i] as Record<string, unknown> | null;
    if (!g || typeof g !== 'object' || typeof g.id !== 'string' || !g.id) return `${path}.data.groups[${i}].id: must be a non-empty string.`;
    groups.push({ id: g.id, name: typeof g.name === 'string' ? g.name : '', created: g.created === true });
  }
  return { policy: policy as AntiAffinityPolicy, groups };
}
