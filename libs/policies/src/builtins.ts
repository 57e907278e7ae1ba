import { AffinityPolicy } from './affinity/affinity.policy';
import { DeletionPolicy } from './deletion/deletion.policy';
import { PolicyClass } from './framework/policy';
import { ScalingPolicy } from './scaling/scaling.policy';
import { ZonePlacementPolicy } from './zone-placement/zone-placement.policy';

/** The policy types Trellis ships (no health, loadbalance, batch or region placement). */
export const BUILTIN_POLICY_TYPES: PolicyClass[] = [
  AffinityPolicy,
  ZonePlacementPolicy,
  ScalingPolicy,
  DeletionPolicy,
] as unknown as PolicyClass[];
