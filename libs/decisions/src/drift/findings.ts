import { DRIFT_FINDING_KINDS, type DriftFindingKind, type PolicyDriftFinding } from '@trellis/policies';

/** What drift detection reports (issue 6): the policy framework's list, which the types report from. */
export const FINDING_KINDS = DRIFT_FINDING_KINDS;
export type FindingKind = DriftFindingKind;

/**
 * A policy type's finding (the framework's PolicyDriftFinding) with the attached policy whose
 * decision the cloud strays from; its message starts `Policy '<name>': `.
 */
export interface Finding extends PolicyDriftFinding {
  policy_id: string;
  policy_name: string;
  binding_id: string | null;
}

/** The same drift seen again has the same fingerprint, so its stored finding is kept, not duplicated. */
export function fingerprintOf(f: Pick<Finding, 'kind' | 'policy_id' | 'group_id' | 'host' | 'node_ids'>): string {
  return [f.kind, f.policy_id, f.group_id ?? '', f.host ?? '', [...f.node_ids].sort().join(',')].join('|');
}
