import { errorMessage } from '@trellis/common';
import type { NovaPort } from '@trellis/nova';
import type { ServerSeen } from './import-plan';

/** The only Nova call the importer makes: reading a server (never creating, changing or deleting). */
export type ServerReader = Pick<NovaPort, 'getServer'>;

/**
 * Looks up each server (with Trellis's service identity: an admin sees every project's servers and
 * their hosts) a few at a time. A 404 is a server that is gone; any other failure is reported per
 * server, so that the cluster it belongs to is not imported on a guess.
 */
export async function lookUpServers(nova: ServerReader, ids: string[], parallel = 4): Promise<Map<string, ServerSeen>> {
  const seen = new Map<string, ServerSeen>();
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      try {
        const server = await nova.getServer(id);
        seen.set(
          id,
          !server || server.status === 'DELETED'
            ? { state: 'gone' }
            : { state: 'found', status: server.status, zone: server.availabilityZone || null, host: server.host ?? server.hypervisorHostname ?? null },
        );
      } catch (e) {
        seen.set(id, { state: 'unreadable', error: errorMessage(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, ids.length) }, worker));
  return seen;
}
