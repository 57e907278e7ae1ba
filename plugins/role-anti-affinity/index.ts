import { RoleAntiAffinityPolicy } from './src/role-anti-affinity.policy';

/** What `loadPolicyPlugins` registers (TRELLIS_POLICY_PLUGINS=<dist>/plugins/role-anti-affinity). */
export const policies = [RoleAntiAffinityPolicy];

export { RoleAntiAffinityPolicy, ROLE_ANTI_AFFINITY_TYPE, MAX_RATIO } from './src/role-anti-affinity.policy';
export type { RoleAntiAffinityProperties } from './src/role-anti-affinity.policy';
export { detectDrift, DriftInputError } from './src/drift';
export type { DriftFinding, DriftKind, DriftNode, DriftSnapshot } from './src/drift';
export { BINDING_KEY, readBindingData } from './src/binding-data';
export type { BoundGroup, RoleAntiAffinityBindingData, AntiAffinityPolicy } from './src/binding-data';
export { parseRoles, nodeRoles, profileRoles, assignGroups, membersPerGroup, groupName } from './src/plan';
