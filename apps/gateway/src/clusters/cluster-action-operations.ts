import { boolParam } from '../shared/body';

/** The rules a cluster action checks besides `clusters:action` (Senlin's cluster_policies:* and Trellis's repair). */
const EXTRA: Record<string, string> = {
  policy_attach: 'cluster_policies:attach',
  policy_detach: 'cluster_policies:detach',
  policy_update: 'cluster_policies:update',
  repair: 'clusters:repair',
};

/**
 * The policy rules of `POST /v1/clusters/{id}/actions` (and its RPC patterns): a dry run changes
 * nothing and has its own rule; any other action needs `clusters:action` and, for the actions
 * with a rule of their own, that one too. `key` is the action's key in the body, null when the
 * body names none (the service then answers 400).
 */
export function clusterActionOperations(key: string | null, dryRun: boolean): string[] {
  if (dryRun) return ['clusters:dry_run'];
  const extra = key !== null ? EXTRA[key] : undefined;
  return extra ? ['clusters:action', extra] : ['clusters:action'];
}

/** The REST request's action key and dry_run flag, read as the controller reads them. */
export function clusterActionOperationsOf(input: { query: Record<string, unknown>; body: unknown }): string[] {
  const body = input.body;
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
  return clusterActionOperations(keys.length === 1 ? keys[0] : null, isDryRun(input.query.dry_run));
}

/** A value the controller refuses is not a dry run here: the rule checked is the stricter one, then the 400. */
function isDryRun(raw: unknown): boolean {
  if (raw === undefined) return false;
  try {
    return boolParam(raw, 'dry_run');
  } catch {
    return false;
  }
}
