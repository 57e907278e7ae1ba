import { ActionEntity, NodeEntity } from '@trellis/persistence';
import { NOVA_PROFILE_SPEC, nodeRow, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';
import { parseAttributePath } from './attribute-path';

describe('GET /v1/clusters/{id}/attrs/{path} (test_cluster_collect.py) and GET /v1/build-info', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  let clusterId: string;
  const nodes: Record<string, string> = {};

  beforeAll(async () => {
    h = await startGatewayHarness();
    const p = await alice().post('/v1/profiles', { profile: { name: 'p-collect', spec: NOVA_PROFILE_SPEC } });
    const c = await alice().post('/v1/clusters', { cluster: { name: 'c-collect', profile_id: p.body.profile.id } });
    clusterId = c.body.cluster.id;
    await h.db.dataSource.getRepository(ActionEntity).update({ id: c.headers.location.split('/actions/')[1] }, { status: 'SUCCEEDED' });
    const rows: Array<[string, string | null, string, Record<string, unknown>]> = [
      ['N01', 'server-1', 'ACTIVE', { placement: { zone: 'az1', host: 'host-1' } }],
      ['N02', 'server-2', 'ACTIVE', { placement: { zone: 'az2' } }],
      ['N03', null, 'CREATING', {}],
    ];
    for (const [i, [name, physicalId, status, data]] of rows.entries()) {
      const node = nodeRow({ name, cluster_id: clusterId, profile_id: p.body.profile.id, physical_id: physicalId, index: i + 1, status, data, metadata: { k: name } });
      nodes[name] = node.id;
      await h.db.dataSource.getRepository(NodeEntity).save(node);
    }
  });
  afterAll(() => h?.close());

  it("collects each member node's value of a path", async () => {
    const res = await alice('1.2').get(`/v1/clusters/${clusterId}/attrs/name`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      cluster_attributes: [
        { id: nodes.N01, value: 'N01' },
        { id: nodes.N02, value: 'N02' },
        { id: nodes.N03, value: 'N03' },
      ],
    });
    const byName = await alice().get('/v1/clusters/c-collect/attrs/metadata.k');
    expect(byName.body.cluster_attributes.map((a: { value: string }) => a.value)).toEqual(['N01', 'N02', 'N03']);
  });

  it('reads details.* from what Trellis recorded about the servers, for the nodes that have one', async () => {
    const res = await alice('1.2').get(`/v1/clusters/${clusterId}/attrs/details.status`);
    expect(res.body.cluster_attributes).toEqual([
      { id: nodes.N01, value: 'ACTIVE' },
      { id: nodes.N02, value: 'ACTIVE' },
    ]);
    const zones = await alice().get(`/v1/clusters/${clusterId}/attrs/data.placement.zone`);
    expect(zones.body.cluster_attributes).toEqual([
      { id: nodes.N01, value: 'az1' },
      { id: nodes.N02, value: 'az2' },
    ]);
  });

  it('shows a member a host as its hostId, as node show does', async () => {
    const res = await alice().get(`/v1/clusters/${clusterId}/attrs/data.placement.host`);
    expect(res.body.cluster_attributes).toHaveLength(1);
    expect(res.body.cluster_attributes[0].value).not.toBe('host-1');
  });

  it.each([
    ['1.1', 'FAKE_CLUSTER', 'name', 400, "API version '1.1' is not supported on this method."],
    ['1.2', 'FAKE_CLUSTER', 'None', 400, 'Required path attribute is missing.'],
    ['1.2', 'FAKE_CLUSTER', 'a..b', 400, "Invalid attribute path - unexpected '.' at 3"],
    ['1.2', 'a3d59666-93be-47ee-a484-c248ed2f49fe', 'name', 404, "The cluster 'a3d59666-93be-47ee-a484-c248ed2f49fe' could not be found."],
  ])('at %s, cluster %s, path %s → %i %s', async (version, cluster, path, status, message) => {
    const res = await alice(version).get(`/v1/clusters/${cluster}/attrs/${path}`);
    expect({ status: res.status, message: res.body.error?.message }).toEqual({ status, message });
  });

  it('parses the JSONPath subset Senlin users write', () => {
    const doc = { a: { b: [{ c: 1 }, { c: 2 }] }, 'x.y': 3 };
    expect(parseAttributePath('a.b[1].c').find(doc)).toEqual([2]);
    expect(parseAttributePath('$.a.b[*].c').find(doc)).toEqual([1, 2]);
    expect(parseAttributePath("'x.y'").find(doc)).toEqual([3]);
    expect(parseAttributePath('a.*').find(doc)).toEqual([[{ c: 1 }, { c: 2 }]]);
    expect(parseAttributePath('a.missing').find(doc)).toEqual([]);
  });

  it("answers build-info with Senlin's shape", async () => {
    const res = await h.as(TOKENS.reader).get('/v1/build-info');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ build_info: { api: { revision: expect.any(String) }, engine: { revision: expect.any(String) } } });
  });
});
