import type { ServerOpDto, ServerUpdateParams, WorkOrderMessage } from '@trellis/contracts';
import { errorMessage } from '@trellis/common';
import { TRELLIS_ACTION_KEY, TRELLIS_CLUSTER_KEY, TRELLIS_NODE_KEY, type NovaPort, type Server, type ServerAction } from '@trellis/nova';

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
  /** the action's end status once it has ended (cancelled, timed out), else null: looked at while a server settles */
  ended?: () => Promise<string | null>;
  /** how often `ended` is looked at (default ENDED_CHECK_MS) */
  endedCheckMs?: number;
  /**
   * an earlier try (a worker that died, or one stopped by an outage) had Nova accept this
   * operation's request: it is not asked for again, only waited for
   */
  requested?: boolean;
  /** called once Nova has accepted the operation's request, before waiting for the server to settle */
  onRequested?: () => void;
}

/** How often a long wait for a server looks whether its action has ended meanwhile. */
const ENDED_CHECK_MS = 5_000;

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

/** Orders whose `update` ops move servers to a new profile. */
export const UPDATE_ACTIONS = ['NODE_UPDATE', 'CLUSTER_UPDATE'];

export async function runServerOp(run: OpRun): Promise<OpOutcome> {
  const { order, op } = run;
  if (order.action === 'NODE_CHECK') return check(run);
  if (UPDATE_ACTIONS.includes(order.action)) return update(run);
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
  if (!run.requested) {
    try {
      if (!(await run.nova.getServer(serverId))) return { gone: true };
      await run.nova.serverAction(serverId, spec.action(params));
    } catch (e) {
      if (isTransientOpError(e)) throw e;
      if ((e as { status?: number }).status === 404) return { gone: true };
      return { error: failedIn(spec.gerund, serverId, novaSays(e)) };
    }
    run.onRequested?.();
  }
  if (!spec.settles) return {};
  const settled = await settle(run, serverId, spec.settles);
  return settled.error ? { ...settled, error: failedIn(spec.gerund, serverId, settled.error) } : settled;
}

/** Polls the server until it is in one of `statuses`; `error` is why it will not get there. */
async function settle(run: OpRun, serverId: string, statuses: string[]): Promise<{ gone?: boolean; error?: string }> {
  const until = Date.now() + run.waitMs;
  const endedEvery = run.endedCheckMs ?? ENDED_CHECK_MS;
  let endedCheck = Date.now() + endedEvery;
  for (;;) {
    const server = await run.nova.getServer(serverId);
    if (!server || server.status === 'DELETED') return { gone: true };
    if (statuses.includes(server.status)) return {};
    if (server.status === 'ERROR') return { error: server.fault?.message || 'the server went to ERROR' };
    if (run.ended && Date.now() >= endedCheck) {
      endedCheck = Date.now() + endedEvery;
      const ended = await run.ended();
      if (ended) return { error: `the action ended ${ended} while the server was ${server.status}` };
    }
    if (Date.now() >= until) {
      return { error: `the server did not become ${statuses.join(' or ')} within ${Math.round(run.waitMs / 1000)} s (it is ${server.status})` };
    }
    await new Promise((r) => setTimeout(r, run.pollMs));
  }
}

/** The update op's params as the engine wrote them; anything else in the message is ignored. */
function updateParams(p: Record<string, unknown>): ServerUpdateParams {
  const metadata = p.metadata;
  const isStringMap =
    metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) && Object.values(metadata).every((v) => typeof v === 'string');
  return { image: str(p.image), flavor: str(p.flavor), name: str(p.name), metadata: isStringMap ? (metadata as Record<string, string>) : undefined };
}

/** Trellis's tags on a server (idempotency.ts): a metadata update keeps them. */
const TRELLIS_KEYS = [TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, TRELLIS_CLUSTER_KEY];

/** the flavor (an id or a name) is the one the server runs, as far as Nova's view of it tells */
const runsFlavor = (server: Server, flavor: string) => server.flavor?.id === flavor || server.flavor?.name === flavor;

/** A step of an update that ends it (the server is gone or went to ERROR, or a wait ran out), with why. */
class UpdateStopped extends Error {}

/**
 * Senlin's server.py do_update, in its order: a new image rebuilds the server (with the new name,
 * if any), else a new name renames it; a new flavor resizes it and confirms the resize once it
 * waits in VERIFY_RESIZE; new metadata replaces the profile's (Trellis's tags stay). A step that
 * finds its change made already (a retried order) is skipped. Failures are Senlin's "Failed in
 * updating server '<id>': ..." and turn the node ERROR; success is ACTIVE 'Update succeeded'.
 */
async function update(run: OpRun): Promise<OpOutcome> {
  const { nova, op } = run;
  const serverId = op.physical_id;
  if (!serverId) return { ok: false, detail: `the node ${op.node_id} has no server`, node: null };
  const params = updateParams(op.params);
  const failed = (message: string): OpOutcome => {
    const reason = failedIn('updating', serverId, message);
    return { ok: false, detail: reason, node: { status: 'ERROR', reason } };
  };
  const gone = `Instance ${serverId} could not be found`;
  const wait = async (statuses: string[]) => {
    const settled = await settle(run, serverId, statuses);
    if (settled.gone || settled.error) throw new UpdateStopped(settled.error ?? gone);
  };
  try {
    let server = await nova.getServer(serverId);
    if (!server || server.status === 'DELETED') return failed(gone);
    if (params.flavor && server.status === 'VERIFY_RESIZE' && runsFlavor(server, params.flavor)) {
      // an earlier try of this order resized the server and stopped before confirming
      await nova.serverAction(serverId, { action: 'confirmResize' });
      await wait(['ACTIVE', 'SHUTOFF']);
      server = (await nova.getServer(serverId)) ?? server;
    }
    if (params.image && server.imageId !== params.image) {
      await nova.serverAction(serverId, { action: 'rebuild', imageRef: params.image, name: params.name });
      // Nova rebuilds a stopped server into SHUTOFF
      await wait(['ACTIVE', 'SHUTOFF']);
    } else if (params.name && server.name !== params.name) {
      await nova.updateServer(serverId, { name: params.name });
    }
    if (params.flavor && !runsFlavor(server, params.flavor)) {
      await nova.serverAction(serverId, { action: 'resize', flavorRef: params.flavor });
      await wait(['VERIFY_RESIZE']);
      await nova.serverAction(serverId, { action: 'confirmResize' });
      await wait(['ACTIVE', 'SHUTOFF']);
    }
    if (params.metadata) {
      const now = (await nova.getServer(serverId)) ?? server;
      const kept = Object.fromEntries(TRELLIS_KEYS.filter((k) => now.metadata[k] !== undefined).map((k) => [k, now.metadata[k]]));
      await nova.setServerMetadata(serverId, { ...params.metadata, ...kept });
    }
  } catch (e) {
    if (e instanceof UpdateStopped) return failed(e.message);
    if (isTransientOpError(e)) throw e;
    if ((e as { status?: number }).status === 404) return failed(gone);
    return failed(novaSays(e));
  }
  return { ok: true, detail: null, node: { status: 'ACTIVE', reason: 'Update succeeded' } };
}
