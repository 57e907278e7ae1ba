import { findServersFor, type NovaPort, type Server } from '@trellis/nova';

/**
 * A node whose create was uncertain carries this in its data until its server is ACTIVE: a try whose
 * answer was lost (a Nova timeout or 5xx) may have made a server that became visible only after the
 * worker looked for it and booted another (RELIABILITY.md, faults). Also set when a worker takes an
 * order over and reuses the servers a dead worker made, whose own uncertainty died with it.
 */
export const UNCERTAIN_CREATE_KEY = 'create_uncertain';
export const UNCERTAIN_CREATE = JSON.stringify({ [UNCERTAIN_CREATE_KEY]: true });

export function isUncertainCreate(data: Record<string, unknown>): boolean {
  return data[UNCERTAIN_CREATE_KEY] === true;
}

/**
 * Deletes every other server Nova holds for the node's action and node (its tag), keeping the one the
 * node records; returns the ids deleted. Called with the owner's Nova, once the node's server is
 * ACTIVE: by then a server whose create answer was lost shows in Nova's list.
 */
export async function sweepDuplicates(nova: NovaPort, node: { id: string; action_id: string; physical_id: string }): Promise<string[]> {
  const servers: Server[] = await findServersFor(nova, { actionId: node.action_id, nodeId: node.id });
  const extra = servers.filter((s) => s.id !== node.physical_id && s.status !== 'DELETED').map((s) => s.id);
  for (const id of extra) await nova.deleteServer(id);
  return extra;
}
