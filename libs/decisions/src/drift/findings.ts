import { DRIFT_FINDING_KINDS, type DriftFindingKind } from '@trellis/policies';

/** What drift detection reports (issue 6): the policy framework's list, which the types report from. */
export const FINDING_KINDS = DRIFT_FINDING_KINDS;
export type FindingKind = DriftFindingKind;

export interface Finding {
  kind: FindingKind;
  /** the attached policy whose decision the cloud strays from */
  policy_id: string;
  policy_name: string;
  binding_id: string | null;
  /** the server group concerned (group_missing, member_outside_group, hosts_shared) */
  group_id?: string;
  group_name?: string;
  /** hosts_shared: the host the nodes share */
  host?: string;
  /** the nodes concerned, in cluster order */
  node_ids: string[];
  message: string;
  /** zone_imbalance: `{expected: {zone: n}, actual: {zone: n}}` */
  detail?: Record<string, unknown>;
}

/** The same drift seen again has the same fingerprint, so its stored finding is kept, not duplicated. */
export function fingerprintOf(f: Pick<Finding, 'kind' | 'policy_id' | 'group_id' | 'host' | 'node_ids'>): string {
  return [f.kind, f.policy_id, f.group_id ?? '', f.host ?? '', [...f.node_ids].sort().join(',')].join('|');
}
