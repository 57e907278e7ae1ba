import type { ServerCreateDto } from '@trellis/contracts';
import type { NovaPort, Server } from '@trellis/nova';

/**
 * The order's servers in boot waves: each wave is booted once every server of the wave before it
 * that is in a server group has a host (see waitUntilPlaced), because Nova's scheduler only counts
 * group members that already have one:
 *
 * - Hard `affinity`: servers booted at the same time into a group none of whose members has a host
 *   pass the scheduler each on its own and land apart; the computes' late check then reschedules
 *   them until "Exceeded maximum number of retries ... Affinity instance group policy was violated",
 *   or both stay apart (seen on real Nova Zed, test/openstack/README.md). So the first server of
 *   such a group goes alone, the others in the next wave.
 * - Hard `anti-affinity`: two servers of a group booted at the same time into one zone can be given
 *   the same host; both fail the late check and, rescheduled together, can collide again on the
 *   next host until Nova gives up with "Exceeded maximum number of retries", although the zone had
 *   a free host for each (seen on the real Nova with two hosts for two servers). So the k-th server
 *   of such a group in each zone goes in wave k.
 *
 * Everything else is in the first wave. One wave (everything at once) for most orders.
 */
export async function bootWaves(
  creates: readonly ServerCreateDto[],
  resolveGroup: (ref: string) => string,
  nova: NovaPort,
): Promise<ServerCreateDto[][]> {
  const byGroup = new Map<string, ServerCreateDto[]>();
  for (const c of creates) {
    if (!c.placement.servergroup) continue;
    const id = resolveGroup(c.placement.servergroup);
    byGroup.set(id, [...(byGroup.get(id) ?? []), c]);
  }
  const waveOf = new Map<string, number>();
  for (const [groupId, members] of byGroup) {
    if (members.length < 2) continue;
    const group = await nova.getServerGroup(groupId);
    if (group?.policy === 'affinity') {
      if (await anyPlaced(nova, group.members)) continue;
      for (const m of members.slice(1)) waveOf.set(m.node_id, 1);
    } else if (group?.policy === 'anti-affinity') {
      const inZone = new Map<string, number>();
      for (const m of members) {
        const zone = m.placement.zone ?? '';
        const k = inZone.get(zone) ?? 0;
        inZone.set(zone, k + 1);
        if (k > 0) waveOf.set(m.node_id, k);
      }
    }
  }
  const waves: ServerCreateDto[][] = [];
  for (const c of creates) {
    const k = waveOf.get(c.node_id) ?? 0;
    while (waves.length <= k) waves.push([]);
    waves[k].push(c);
  }
  return waves.filter((w) => w.length > 0);
}

/** a host is visible to admins; hostId, its per-project hash, to everyone */
const placedOn = (s: Server) => s.host ?? s.hostId;

async function anyPlaced(nova: NovaPort, serverIds: readonly string[]): Promise<boolean> {
  for (const id of serverIds) {
    const s = await nova.getServer(id);
    if (s && placedOn(s)) return true;
  }
  return false;
}

/**
 * Polls the server until Nova placed it (a host), or it can no longer be placed (ERROR, deleted,
 * gone), or the time is up. True when it has a host.
 */
export async function waitUntilPlaced(
  nova: NovaPort,
  serverId: string,
  options: { pollMs: number; timeoutMs: number; sleep?: (ms: number) => Promise<void>; now?: () => number },
): Promise<boolean> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const deadline = now() + options.timeoutMs;
  for (;;) {
    const s = await nova.getServer(serverId);
    if (!s || s.status === 'ERROR' || s.status === 'DELETED') return false;
    if (placedOn(s)) return true;
    if (now() >= deadline) return false;
    await sleep(options.pollMs);
  }
}
