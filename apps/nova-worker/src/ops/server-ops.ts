import type { ServerOpDto, WorkOrderMessage } from '@trellis/contracts';
import { errorMessage } from '@trellis/common';
import type { NovaPort, Server, ServerAction } from '@trellis/nova';

/**
 * Senlin's node check, recover and operations on one node's server (senlin/engine/node.py do_check,
 * do_recover, do_operation; profiles/os/nova/server.py handle_*), in Nova's terms, with Senlin's
 * node statuses and reasons.
 */

/** What became of the node and of the action. `node` null: the node row stays as it was. */
export interface OpOutcome {
  ok: boolean;
  /** why the action failed (added to Senlin's "Node ... failed." text) */
  detail: string | null;
  node: { status: 'ACTIVE' | 'ERROR' | 'WARNING'; reason: string; clearPhysicalId?: boolean } | null;
}

interface OpSpec {
  /** the word in Senlin's "Failed in <op> server '<id>': ..." */
  gerund: string;
  action: (params: Record<string, unknown>) => ServerAction;
  /** the status the server settles in; null: Nova's answer is the outcome */
  settles: string[] | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The operations of os.nova.server-1.0 (server.py OPERATIONS) and the Nova actions behind them. */
export const SERVER_OPERATIONS: Record<string, OpSpec> = {
  reboot: {
    gerund: 'rebooting',
    action: (p) => ({ action: 'reboot', type: String(p.type ?? 'SOFT').toUpperCase() === 'HARD' ? 'HARD' : 'SOFT' }),
    settles: ['ACTIVE'],
  },
  rebuild: { gerund: 'rebuilding', action: (p) => ({ action: 'rebuild', imageRef: str(p.image) }), settles: ['ACTIVE'] },
  change_password: { gerund: 'change_password', action: (p) => ({ action: 'changePassword', adminPass: String(p.admin_pass ?? '') }), settles: null },
  pause: { gerund: 'pause', action: () => ({ action: 'pause' }), settles: ['PAUSED'] },
  unpause: { gerund: 'unpause', action: () => ({ action: 'unpause' }), settles: ['ACTIVE'] },
  suspend: { gerund: 'suspend', action: () => ({ action: 'suspend' }), settles: ['SUSPENDED'] },
  resume: { gerund: 'resume', action: () => ({ action: 'resume' }), settles: ['ACTIVE'] },
  lock: { gerund: 'lock', action: () => ({ action: 'lock' }), settles: null },
  unlock: { gerund: 'unlock', action: () => ({ action: 'unlock' }), settles: null },
  start: { gerund: 'start', action: () => ({ action: 'os-start' }), settles: ['ACTIVE'] },
  stop: { gerund: 'stop', action: () => ({ action: 'os-stop' }), settles: ['SHUTOFF'] },
  rescue: {
    gerund: 'rescue',
    action: (p) => ({ action: 'rescue', rescueImageRef: str(p.image_ref), adminPass: str(p.admin_pass) }),
    settles: ['RESCUE'],
  },
  unrescue: { gerund: 'unrescue', action: () => ({ action: 'unrescue' }), settles: ['ACTIVE'] },
  // a cold migration waits for its confirmation in VERIFY_RESIZE
  migrate: { gerund: 'migrate', action: () => ({ action: 'migrate' }), settles: ['ACTIVE', 'VERIFY_RESIZE'] },
  evacuate: {
    gerund: 'evacuate',
    action: (p) => ({ action: 'evacuate', host: str(p.host), force: p.force === undefined ? undefined : String(p.force).toLowerCase() === 'true' }),
    settles: ['ACTIVE'],
  },
};

export interface OpRun {
  nova: NovaPort;
  order: WorkOrderMessage;
  op: ServerOpDto;
  /** how long to wait for the server to settle */
  waitMs: number;
  pollMs: number;
  /** the node's status before the operation (a check keeps WARNING, as Senlin does) */
  nodeStatus: string;
  nodeReason: string;
}

/** A Nova error that retrying later may fix; anything else is the operation's failure. */
export function isTransientOpError(e: unknown): boolean {
  if (e && typeof e === 'object' && (e as { permanent?: unknown }).permanent === true) return false;
  const status = (e as { status?: unknown })?.status;
  if (typeof status === 'number') return status >= 500 || status === 429;
  return !(e && typeof e === 'object' && (e as Error).name === 'TrustError');
}

/** Nova's own words when it answered, else the error's message */
const novaSays = (e: unknown): string => {
  const said = (e as { serviceMessage?: unknown })?.serviceMessage;
  return typeof said === 'string' && said ? said : errorMessage(e);
};

const failedIn = (gerund: string, serverId: string, message: string) =>
  `Failed in ${gerund} server '${serverId}': ${message.replace(/\.$/, '')}.`;

export async function runServerOp(run: OpRun): Promise<OpOutcome> {
  const { order, op } = run;
  if (order.action === 'NODE_CHECK') return check(run);
  const serverId = op.physical_id;
  if (order.action === 'NODE_RECOVER') {
    if (!serverId) return { ok: false, detail: 'the node has no server to recover', node: null };
    if (op.op !== 'reboot' && op.op !== 'rebuild') {
      return { ok: false, detail: `recovery operation ${op.op.toUpperCase()} is not supported by the nova-worker`, node: null };
    }
    // Senlin's recovery by reboot is a HARD one unless asked otherwise
    const params = op.op === 'reboot' ? { type: 'HARD', ...op.params } : op.params;
    const done = await perform(run, serverId, SERVER_OPERATIONS[op.op], params);
    if (done.gone) return { ok: false, detail: `server ${serverId} could not be found`, node: { status: 'ERROR', reason: 'Recovery failed' } };
    if (done.error) return { ok: false, detail: done.error, node: { status: 'ERROR', reason: done.error } };
    return { ok: true, detail: null, node: { status: 'ACTIVE', reason: 'Recovery succeeded' } };
  }
  const spec = SERVER_OPERATIONS[op.op];
  if (!spec) return { ok: false, detail: `the operation '${op.op}' is not supported by the profile type 'os.nova.server-1.0'`, node: null };
  if (!serverId) return { ok: false, detail: 'the node has no server', node: null };
  const done = await perform(run, serverId, spec, op.params);
  const error = done.gone ? failedIn(spec.gerund, serverId, `Instance ${serverId} could not be found`) : done.error;
  if (error) return { ok: false, detail: error, node: { status: 'ERROR', reason: error } };
  return { ok: true, detail: null, node: { status: 'ACTIVE', reason: `Operation '${op.op}' succeeded` } };
}

/**
 * Senlin's do_check: a server Nova no longer knows turns the node ERROR (its physical id cleared)
 * and the check still succeeds; a server that is not ACTIVE turns it ERROR; an ACTIVE one ACTIVE.
 */
async function check(run: OpRun): Promise<OpOutcome> {
  const serverId = run.op.physical_id;
  if (!serverId) return { ok: false, detail: 'the node has no server', node: null };
  let server: Server | null;
  try {
    server = await run.nova.getServer(serverId);
  } catch (e) {
    if (isTransientOpError(e)) throw e;
    const reason = failedIn('checking', serverId, novaSays(e));
    return { ok: false, detail: reason, node: { status: 'ERROR', reason } };
  }
  if (!server || server.status === 'DELETED') {
    const reason = `Failed in found server '${serverId}': Instance ${serverId} could not be found.`;
    return { ok: true, detail: null, node: { status: 'ERROR', reason, clearPhysicalId: true } };
  }
  if (server.status !== 'ACTIVE') return { ok: true, detail: null, node: { status: 'ERROR', reason: 'Check: Node is not ACTIVE.' } };
  if (run.nodeStatus === 'WARNING') {
    return { ok: true, detail: null, node: { status: 'WARNING', reason: `Check: Physical object is ACTIVE but the node status was WARNING. ${run.nodeReason}` } };
  }
  return { ok: true, detail: null, node: { status: 'ACTIVE', reason: 'Check: Node is ACTIVE.' } };
}

/** The Nova action, then (when it has one) the wait for the status it settles in. */
async function perform(run: OpRun, serverId: string, spec: OpSpec, params: Record<string, unknown>): Promise<{ gone?: boolean; error?: string }> {
  try {
    if (!(await run.nova.getServer(serverId))) return { gone: true };
    await run.nova.serverAction(serverId, spec.action(params));
  } catch (e) {
    if (isTransientOpError(e)) throw e;
    if ((e as { status?: number }).status === 404) return { gone: true };
    return { error: failedIn(spec.gerund, serverId, novaSays(e)) };
  }
  if (!spec.settles) return {};
  const until = Date.now() + run.waitMs;
  for (;;) {
    const server = await run.nova.getServer(serverId);
    if (!server || server.status === 'DELETED') return { gone: true };
    if (spec.settles.includes(server.status)) return {};
    if (server.status === 'ERROR') {
      return { error: failedIn(spec.gerund, serverId, server.fault?.message || 'the server went to ERROR') };
    }
    if (Date.now() >= until) {
      return { error: failedIn(spec.gerund, serverId, `the server did not become ${spec.settles.join(' or ')} within ${Math.round(run.waitMs / 1000)} s (it is ${server.status})`) };
    }
    await new Promise((r) => setTimeout(r, run.pollMs));
  }
}
