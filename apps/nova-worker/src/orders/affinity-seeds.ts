import type { ServerCreateDto } from '@trellis/contracts';
import type { NovaPort, Server } from '@trellis/nova';

/**
 * Nova puts a server of a hard `affinity` group on the host of the group's members, but only of
 * members that already have a host. Servers booted at the same time into a group none of whose
 * members has one pass the scheduler each on its own and land apart; the computes' late check then
 * reschedules them until "Exceeded maximum number of retries ... Affinity instance group policy
 * was violated", or both stay apart (seen on real Nova Zed, test/openstack/README.md). So the
 * first server of such a group is booted alone, and the others once Nova has given it a host.
 *
 * Returns the node ids to boot first: one per hard-affinity group that gets two or more servers
 * from this order and has no member placed yet.
 */
export async function affinitySeeds(
  creates: readonly ServerCreateDto[],
  resolveGroup: (ref: string) => string,
  nova: NovaPort,
): Promise<Set<string>> {
  const byGroup = new Map<string, ServerCreateDto[]>();
  for (const c of creates) {
    if (!c.placement.servergroup) continue;
    const id = resolveGroup(c.placement.servergroup);
    byGroup.set(id, [...(byGroup.get(id) ?? []), c]);
  }
  const seeds = new Set<string>();
  for (const [groupId, members] of byGroup) {
    if (members.length < 2) continue;
    const group = await nova.getServerGroup(groupId);
    if (group?.policy !== 'affinity') continue;
    if (await anyPlaced(nova, group.members)) continue;
    seeds.add(members[0].node_id);
  }
  return seeds;
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
