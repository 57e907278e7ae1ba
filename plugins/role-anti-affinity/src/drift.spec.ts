import { DriftNode, DriftSnapshot, detectDrift } from './drift';

const binding = (policy = 'anti-affinity') => ({
  RoleAntiAffinityPolicy: {
    version: '1.0',
    data: {
      policy,
      groups: [
        { id: 'g1', name: 'web-aa-1', created: true },
        { id: 'g2', name: 'web-aa-2', created: true },
      ],
    },
  },
});
const node = (id: string, group: string | null, server: string | null, host: string | null): DriftNode => ({
  id,
  physical_id: server,
  data: { placement: group ? { servergroup: group, zone: 'az1' } : { zone: 'az1' } },
  server: { host },
});
const healthy: DriftNode[] = [node('n1', 'g1', 's1', 'h1'), node('n2', 'g2', 's2', 'h1'), node('n3', 'g1', 's3', 'h2'), node('n4', null, 's4', 'h2')];
const groups = [
  { id: 'g1', name: 'web-aa-1', policy: 'anti-affinity', members: ['s1', 's3'] },
  { id: 'g2', name: 'web-aa-2', policy: 'anti-affinity', members: ['s2'] },
];
const snapshot = (over: Partial<DriftSnapshot> = {}): DriftSnapshot => ({ binding_data: binding(), nodes: healthy, server_groups: groups, ...over });

describe('detectDrift', () => {
  it.each<[string, Partial<DriftSnapshot>, unknown[]]>([
    ['nothing when every node is where it was placed (groups may share hosts across groups)', {}, []],
    [
      'a group that no longer exists, with the nodes placed in it',
      { server_groups: [groups[0]] },
      [{ kind: 'group_missing', group_id: 'g2', node_ids: ['n2'], message: "The server group 'web-aa-2' (g2) no longer exists in Nova; 1 node(s) were placed in it." }],
    ],
    [
      'a role node whose server is not a member of its group',
      { server_groups: [{ ...groups[0], members: ['s1'] }, groups[1]] },
      [
        {
          kind: 'member_outside_group',
          group_id: 'g1',
          node_ids: ['n3'],
          message: "Node 'n3' was placed in the server group 'web-aa-1' (g1), but its server s3 is not a member of it.",
        },
      ],
    ],
    [
      'two role nodes of one hard anti-affinity group on one host',
      { nodes: [...healthy.slice(0, 2), node('n3', 'g1', 's3', 'h1'), { ...node('n5', 'g1', 's5', 'h1'), name: 'db-5' }] },
      [
        { kind: 'member_outside_group', group_id: 'g1', node_ids: ['n5'] },
        {
          kind: 'hosts_shared',
          group_id: 'g1',
          node_ids: ['n1', 'n3', 'n5'],
          host: 'h1',
          message: "Nodes 'n1', 'n3', 'db-5' (n5) of the anti-affinity server group 'web-aa-1' (g1) share the host 'h1'.",
        },
      ],
    ],
    [
      'no shared-host finding for soft anti-affinity',
      { binding_data: binding('soft-anti-affinity'), nodes: [node('n1', 'g1', 's1', 'h1'), node('n3', 'g1', 's3', 'h1')] },
      [],
    ],
    [
      'no membership finding for a node whose server is not built yet',
      { nodes: [...healthy, node('n6', 'g2', null, null)] },
      [],
    ],
  ])('%s', (_case, over, expected) => {
    const findings = detectDrift(snapshot(over));
    expect(findings).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(findings[i]).toMatchObject(e as object));
  });

  it('reads the server id from server.id when the node has no physical_id', () => {
    const nodes: DriftNode[] = [{ id: 'n1', data: { placement: { servergroup: 'g1' } }, server: { id: 's9', host: 'h1' } }];
    expect(detectDrift(snapshot({ nodes })).map((f) => f.kind)).toEqual(['member_outside_group']);
  });

  it.each<[string, Partial<DriftSnapshot>, string]>([
    ['binding data of another policy', { binding_data: { AffinityPolicy: {} } }, 'binding_data: binding_data.RoleAntiAffinityPolicy is missing'],
    ['a group without an id', { binding_data: { RoleAntiAffinityPolicy: { version: '1.0', data: { policy: 'anti-affinity', groups: [{}] } } } }, 'binding_data.RoleAntiAffinityPolicy.data.groups[0].id'],
    ['nodes that are not a list', { nodes: {} as never }, 'nodes: must be a list'],
    ['server groups that are not a list', { server_groups: null as never }, 'server_groups: must be a list'],
    ['a node without an id', { nodes: [{} as DriftNode] }, 'nodes[0].id: must be a non-empty string'],
  ])('refuses %s, naming the field', (_case, over, message) => {
    expect(() => detectDrift(snapshot(over))).toThrow(expect.objectContaining({ name: 'DriftInputError', message: expect.stringContaining(message) }));
  });
});
