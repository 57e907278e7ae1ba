import { AffinityPolicy } from './affinity/affinity.policy';
import { DeletionPolicy } from './deletion/deletion.policy';
import { POLICY_TYPE_META, PolicyClass, PolicyTypeMeta, hypervisorFreeTypeNames, memberFreeTypeNames } from './framework/policy';
import { ScalingPolicy } from './scaling/scaling.policy';
import { ZonePlacementPolicy } from './zone-placement/zone-placement.policy';

/** The policy types Trellis ships (no health, loadbalance, batch or region placement). */
export const BUILTIN_POLICY_TYPES: PolicyClass[] = [
  AffinityPolicy,
  ZonePlacementPolicy,
  ScalingPolicy,
  DeletionPolicy,
] as unknown as PolicyClass[];

/** The names (without version) of the types Trellis ships, sorted. */
export const BUILTIN_POLICY_TYPE_NAMES: readonly string[] = Object.freeze(
  [...new Set(BUILTIN_POLICY_TYPES.map((cls) => (cls[POLICY_TYPE_META] as PolicyTypeMeta).name))].sort(),
);

/**
 * The built-in policy types (without their version) whose hooks never read the hypervisors (they
 * declare `readsHypervisors: false`): what a process without plugins leaves them out for.
 * PolicyRegistry.hypervisorFreeTypes() adds the plugins that say the same.
 */
export const HYPERVISOR_FREE_POLICY_TYPES: readonly string[] = Object.freeze(
  hypervisorFreeTypeNames(BUILTIN_POLICY_TYPES.map((cls) => cls[POLICY_TYPE_META] as PolicyTypeMeta)),
);

/**
 * The built-in policy types (without their version) whose hooks never read a server group's
 * members (they declare `readsGroupMembers: false`): every one of them.
 * PolicyRegistry.memberFreeTypes() adds the plugins that say the same.
 */
export const MEMBER_FREE_POLICY_TYPES: readonly string[] = Object.freeze(
  memberFreeTypeNames(BUILTIN_POLICY_TYPES.map((cls) => cls[POLICY_TYPE_META] as PolicyTypeMeta)),
);

/** The one built-in type that reads the hypervisors: with enable_drs_extension (AffinityPolicy.preOp). */
export const AFFINITY_POLICY_TYPE = 'senlin.policy.affinity';

/**
 * Whether a bound policy may ask the cloud for its hypervisors (CloudView.hypervisors()), so that a
 * decision's snapshot must carry them: the affinity policy whose spec's enable_drs_extension is
 * there and not plain false (a string "false" counts: Senlin's Boolean parses strings), and any
 * type not in `hypervisorFree` (the registry's hypervisorFreeTypes(): a plugin that does not say it
 * never reads them may read anything). The loader's SQL says the same (libs/decisions,
 * READS_HYPERVISORS_SQL, held to this by its spec).
 */
export function readsHypervisors(
  policy: { type: string; spec?: unknown },
  hypervisorFree: readonly string[] = HYPERVISOR_FREE_POLICY_TYPES,
): boolean {
  const type = policy.type.split('-')[0];
  if (hypervisorFree.includes(type)) return false;
  if (type !== AFFINITY_POLICY_TYPE) return true;
  const properties = (policy.spec as { properties?: Record<string, unknown> } | null | undefined)?.properties;
  const drs = properties && typeof properties === 'object' ? properties.enable_drs_extension : undefined;
  return drs !== undefined && drs !== false;
}
