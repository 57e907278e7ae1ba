import type { SnapshotPolicy } from './load-snapshot';

/** The cluster config key with which the user asks for (true) or refuses (false) the cleanup. */
export const CLEANUP_FAILED_NODES_KEY = 'cleanup_failed_nodes';

/** Actions that create nodes in a cluster, so a failure in Nova can leave ERROR nodes behind. */
export const SCALE_OUT_ACTIONS: ReadonlySet<string> = new Set(['CLUSTER_SCALE_OUT', 'CLUSTER_RESIZE', 'NODE_CREATE']);

const DELETION_POLICY = /^senlin\.policy\.deletion-1\.[01]$/;

export type CleanupChoice =
  /** delete the ERROR nodes the action created, and their servers */
  | { cleanup: true; because: string }
  /** keep them (today's behaviour); `error` names a config value that could not be read */
  | { cleanup: false; because: string | null; error?: string };

/**
 * Whether a scale-out that failed in Nova removes the ERROR nodes it created. The cluster's config
 * `cleanup_failed_nodes` decides when set (true or false, so a user can also refuse); otherwise an
 * enabled deletion policy (senlin.policy.deletion-1.0/1.1) whose `destroy_after_deletion` is true
 * (Senlin's default when the spec leaves it out) asks for it; with neither the nodes are kept.
 */
export function chooseFailedScaleOutCleanup(
  config: Record<string, unknown> | null | undefined,
  policies: Array<Pick<SnapshotPolicy, 'name' | 'type' | 'spec' | 'enabled' | 'binding_id'>>,
): CleanupChoice {
  const value = config?.[CLEANUP_FAILED_NODES_KEY];
  if (value !== undefined && value !== null) {
    if (value === true) return { cleanup: true, because: `the cluster's config '${CLEANUP_FAILED_NODES_KEY}' is true` };
    if (value === false) return { cleanup: false, because: `the cluster's config '${CLEANUP_FAILED_NODES_KEY}' is false` };
    return {
      cleanup: false,
      because: null,
      error: `The cluster's config '${CLEANUP_FAILED_NODES_KEY}' must be true or false, not ${JSON.stringify(value)}; the node(s) that failed were kept.`,
    };
  }
  const deletion = policies.find((p) => p.binding_id && p.enabled && DELETION_POLICY.test(p.type) && destroysAfterDeletion(p.spec));
  if (deletion) return { cleanup: true, because: `the deletion policy '${deletion.name}' has destroy_after_deletion true` };
  return { cleanup: false, because: null };
}

/** The policy's `destroy_after_deletion`, true when the spec leaves it out (as Senlin's schema). */
function destroysAfterDeletion(spec: Record<string, unknown>): boolean {
  const properties = (spec?.properties ?? {}) as Record<string, unknown>;
  const value = properties.destroy_after_deletion;
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return ['true', 'yes', 'on', '1', 'y', 't'].includes(value.toLowerCase());
  return value === true || value === 1;
}
