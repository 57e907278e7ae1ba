import type { ServerCreateDto } from '@trellis/contracts';
import { buildServerRequest, toNovaNetworks } from './server-request';

const create = (over: Record<string, unknown> = {}) =>
  ({
    node_id: '11111111-1111-4111-8111-111111111111',
    name: 'node-abc',
    index: 3,
    placement: {},
    profile: { flavor: 'm1.tiny', image: 'cirros', networks: [] },
    ...over,
  }) as never;

/** the request for a server whose profile is `create.profile` (how serverProfile() resolves it is in work-order.spec) */
const build = (create: ServerCreateDto, i: typeof ids, resolve: (ref: string) => string) => buildServerRequest(create, create.profile!, i, resolve);

const ids = { clusterId: '22222222-2222-4222-8222-222222222222', actionId: '33333333-3333-4333-8333-333333333333' };

describe('buildServerRequest', () => {
  it('tags the server with its cluster, node and action so a redelivery can find it', () => {
    const req = build(create(), ids, (r) => r);
    expect(req.metadata).toEqual({
      trellis_cluster: ids.clusterId,
      trellis_node: '11111111-1111-4111-8111-111111111111',
      trellis_action: ids.actionId,
    });
    expect(req).toMatchObject({ name: 'node-abc', imageRef: 'cirros', flavorRef: 'm1.tiny', networks: 'none' });
  });

  it('puts the placement zone over the profile zone and the policy group over the profile hint', () => {
    const req = build(
      create({
        placement: { zone: 'az2', servergroup: 'ref:group:1' },
        profile: {
          flavor: '1',
          image: 'img',
          availability_zone: 'az1',
          scheduler_hints: { group: 'profile-group', same_host: 'x' },
          metadata: { role: 'db', replicas: 3 },
        },
      }),
      ids,
      (ref) => (ref === 'ref:group:1' ? 'real-group-id' : ref),
    );
    expect(req.availabilityZone).toBe('az2');
    expect(req.schedulerHints).toEqual({ group: 'real-group-id', same_host: 'x' });
    expect(req.metadata).toMatchObject({ role: 'db', replicas: '3' });
  });

  it('keeps the profile zone and hints when the policies set none', () => {
    const req = build(
      create({ profile: { flavor: '1', image: 'i', availability_zone: 'az1', scheduler_hints: { group: 'g' } } }),
      ids,
      (r) => r,
    );
    expect(req.availabilityZone).toBe('az1');
    expect(req.schedulerHints).toEqual({ group: 'g' });
  });
});

describe('toNovaNetworks', () => {
  it.each([
    [undefined, 'none'],
    [[], 'none'],
    ['auto', 'auto'],
    [[{ network: 'net-1' }, { port: 'port-1' }, { network: 'net-2', fixed_ip: '10.0.0.5' }], [{ uuid: 'net-1' }, { port: 'port-1' }, { uuid: 'net-2', fixed_ip: '10.0.0.5' }]],
  ])('%j → %j', (input, expected) => {
    expect(toNovaNetworks(input)).toEqual(expected);
  });
});
