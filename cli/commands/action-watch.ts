import type { TrellisApi } from './trellis-api';

/**
 * `trellis watch`: follows an action through the API until it ends, showing how many of the nodes
 * its decision planned are ACTIVE, in ERROR or (for the nodes it removes) gone. The web page
 * (apps/gateway/src/ui/static/progress.js) counts the same way.
 */

const FINISHED = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export interface ActionProgress {
  /** nodes the decision creates (a repair's replacements included), and how many are ACTIVE or ERROR now */
  create: number;
  active: number;
  error: number;
  /** nodes the decision removes, and how many are gone */
  delete: number;
  deleted: number;
  /** false until the policy engine stored a decision (and for actions that run no policy chain) */
  decided: boolean;
}

export interface WatchedAction {
  id: string;
  action: string;
  status: string;
  status_reason: string | null;
  cluster_id?: string;
}

export interface WatchState {
  action: WatchedAction;
  progress: ActionProgress;
}

interface PlanNode {
  node_id: string;
}

interface StoredDecision {
  plan?: {
    create_nodes?: PlanNode[];
    delete_nodes?: PlanNode[];
    repair?: { replacements?: Array<{ node_id: string; old_node_id: string }> };
  };
}

/** the decision's planned nodes against the cluster's nodes now */
export function progressOf(decision: StoredDecision | null, nodes: Array<{ id: string; status: string }>): ActionProgress {
  const replacements = decision?.plan?.repair?.replacements ?? [];
  const creates = [...(decision?.plan?.create_nodes ?? []).map((n) => n.node_id), ...replacements.map((r) => r.node_id)];
  const deletes = [...(decision?.plan?.delete_nodes ?? []).map((n) => n.node_id), ...replacements.map((r) => r.old_node_id)];
  const now = new Map(nodes.map((n) => [n.id, n.status]));
  const count = (status: string) => creates.filter((id) => now.get(id) === status).length;
  return {
    create: creates.length,
    active: count('ACTIVE'),
    error: count('ERROR'),
    delete: deletes.length,
    deleted: deletes.filter((id) => !now.has(id)).length,
    decided: decision !== null,
  };
}

/** `2/3 ACTIVE, 1 ERROR; 1/2 removed` */
export function countsText(p: ActionProgress, finished: boolean): string {
  if (!p.decided) return finished ? 'no decision (no policy chain ran)' : 'waiting for the policy engine';
  const parts: string[] = [];
  if (p.create) parts.push(`${p.active}/${p.create} ACTIVE, ${p.error} ERROR`);
  if (p.delete) parts.push(`${p.deleted}/${p.delete} removed`);
  return parts.join('; ') || 'no nodes to create or remove';
}

/** The terminal's line, redrawn in place: `CLUSTER_SCALE_OUT [##########..........] 2/4 ACTIVE, 0 ERROR  RUNNING`. */
export function barLine({ action, progress }: WatchState, width = 24): string {
  const planned = progress.create + progress.delete;
  const done = progress.active + progress.error + progress.deleted;
  const filled = planned ? Math.round((done / planned) * width) : progress.decided ? width : 0;
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  return `${action.action} ${bar} ${countsText(progress, FINISHED.includes(action.status))}  ${action.status}`;
}

/** One line of a log (stdout is not a terminal), written when it differs from the last one. */
export function quietLine({ action, progress }: WatchState): string {
  return `${action.status} ${action.action}: ${countsText(progress, FINISHED.includes(action.status))}`;
}

/** The last line: the result as the action states it. */
export function resultLine(action: WatchedAction): string {
  return `${action.status}: ${action.status_reason ?? ''}`.trimEnd();
}

export interface WatchOptions {
  out: { write(text: string): unknown; isTTY?: boolean };
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Polls the action (and its decision and the cluster's nodes) until it ends; its final view. */
export async function watchAction(api: TrellisApi, actionId: string, options: WatchOptions): Promise<WatchedAction> {
  const { out } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let decision: StoredDecision | null = null;
  let last = '';
  for (;;) {
    const action = (await read(api, `/actions/${encodeURIComponent(actionId)}`)).action as WatchedAction;
    if (!decision) {
      const found = await api.call('GET', `/actions/${action.id}/decision`);
      if (found.status === 200) decision = found.body.decision as StoredDecision;
    }
    const nodes = action.cluster_id ? await nodesOf(api, action.cluster_id) : [];
    const state = { action, progress: progressOf(decision, nodes) };
    const finished = FINISHED.includes(action.status);
    if (out.isTTY) {
      out.write(`\r\x1b[2K${barLine(state)}${finished ? '\n' : ''}`);
    } else if (quietLine(state) !== last) {
      last = quietLine(state);
      out.write(`${last}\n`);
    }
    if (finished) {
      out.write(`${resultLine(action)}\n`);
      return action;
    }
    await sleep(options.intervalMs ?? 1000);
  }
}

/** the cluster's nodes now; none once the cluster is gone (its delete), which the API answers with a 400 */
async function nodesOf(api: TrellisApi, clusterId: string): Promise<Array<{ id: string; status: string }>> {
  const path = `/nodes?cluster_id=${clusterId}&limit=1000`;
  const res = await api.call('GET', path);
  return res.status === 400 ? [] : ok(res, path).nodes;
}

async function read(api: TrellisApi, path: string): Promise<any> {
  return ok(await api.call('GET', path), path);
}

function ok(res: { status: number; body: any }, path: string): any {
  if (res.status !== 200) throw new Error(res.body?.error?.message ?? `GET /v1${path} answered ${res.status}`);
  return res.body;
}
