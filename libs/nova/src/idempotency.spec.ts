import { TRELLIS_ACTION_KEY, TRELLIS_CLUSTER_KEY, TRELLIS_NODE_KEY, findServerFor, tagOf, trellisMetadata } from './idempotency';
import type { NovaPort, Server } from './nova.port';

function server(id: string, status: string, metadata: Record<string, string>): Server {
  return { id, name: id, status, availabilityZone: null, host: null, hypervisorHostname: null, hostId: null, metadata, fault: null };
}

/** a NovaPort whose listServers filters the given servers as Nova + the client would */
function portWith(servers: Server[]): NovaPort {
  return {
    listServers: async (filter) =>
      servers.filter((s) => Object.entries(filter?.metadata ?? {}).every(([k, v]) => s.metadata[k] === v)),
  } as NovaPort;
}

describe('server tags', () => {
  it('names the metadata keys', () => {
    expect([TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, TRELLIS_CLUSTER_KEY]).toEqual(['trellis_action', 'trellis_node', 'trellis_cluster']);
    expect(trellisMetadata({ actionId: 'a', nodeId: 'n', clusterId: 'c' })).toEqual({ trellis_action: 'a', trellis_node: 'n', trellis_cluster: 'c' });
    expect(trellisMetadata({ actionId: 'a', nodeId: 'n' })).toEqual({ trellis_action: 'a', trellis_node: 'n' });
    expect(tagOf({ trellis_action: 'a' })).toBeNull();
  });

  it('finds the server booted for an action and node, not one of another node or action', async () => {
    const nova = portWith([
      server('s1', 'ACTIVE', trellisMetadata({ actionId: 'a1', nodeId: 'n1' })),
      server('s2', 'ACTIVE', trellisMetadata({ actionId: 'a1', nodeId: 'n2' })),
      server('s3', 'ACTIVE', trellisMetadata({ actionId: 'a2', nodeId: 'n3' })),
    ]);
    expect((await findServerFor(nova, { actionId: 'a1', nodeId: 'n2' }))?.id).toBe('s2');
    expect(await findServerFor(nova, { actionId: 'a2', nodeId: 'n1' })).toBeNull();
  });

  it('prefers a healthy server when a node somehow has two', async () => {
    const tag = trellisMetadata({ actionId: 'a', nodeId: 'n' });
    const nova = portWith([server('a-err', 'ERROR', tag), server('z-ok', 'BUILD', tag)]);
    expect((await findServerFor(nova, { actionId: 'a', nodeId: 'n' }))?.id).toBe('z-ok');
  });
});
