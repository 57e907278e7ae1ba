import { ActionEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, PROJECT_A, PROJECT_B, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';
import { MAX_NODES_PER_REQUEST } from './cluster-actions.service';

/**
 * del_nodes and add_nodes name their nodes by id, name or short id. They are resolved in one
 * query, not one lookup per name (100,000 names held the API for 30 s), and a list longer than any
 * cluster may be is refused before anything is looked up.
 */
describe('del_nodes and add_nodes: the nodes named, in one query', () => {
  let h: GatewayHarness;
  const alice = () => h.as(TOKENS.alice, '1.14');
  let cluster: { id: string; profile_id: string };
  let members: Array<{ id: string; name: string }>;

  beforeAll(async () => {
    h = await startGatewayHarness();
    const p = await alice().post('/v1/profiles', { profile: { name: 'p-members', spec: NOVA_PROFILE_SPEC } });
    const c = await alice().post('/v1/clusters', { cluster: { name: 'c-members', profile_id: p.body.profile.id } });
    cluster = c.body.cluster;
    await h.db.dataSource.getRepository(ActionEntity).update({ id: c.headers.location.split('/actions/')[1] }, { status: 'SUCCEEDED' });
    // 300 members of the cluster, and nodes of project B with the same names (never to be found)
    const rows: Array<{ id: string; name: string }> = await h.db.dataSource.query(
      `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", status, index, init_at, created_at)
       SELECT gen_random_uuid(), 'member-' || i, $1, $2, $3, 'alice-id', 'ACTIVE', i, now(), now() FROM generate_series(1, 300) AS i
       RETURNING id, name`,
      [cluster.id, cluster.profile_id, PROJECT_A],
    );
    members = rows.sort((a, b) => a.name.localeCompare(b.name));
    await h.db.dataSource.query(
      `INSERT INTO nodes (id, name, profile_id, project, "user", status) SELECT gen_random_uuid(), 'member-' || i, $1, $2, 'bob-id', 'ACTIVE' FROM generate_series(1, 10) AS i`,
      [cluster.profile_id, PROJECT_B],
    );
    await h.db.dataSource.query('UPDATE clusters SET desired_capacity = 300, max_size = 1000 WHERE id = $1', [cluster.id]);
  });
  afterAll(() => h?.close());

  /** the SQL statements the gateway ran while `work` did */
  async function statements<T>(work: () => Promise<T>): Promise<{ result: T; count: number }> {
    const logged = jest.spyOn(h.db.dataSource.logger, 'logQuery');
    try {
      const result = await work();
      return { result, count: logged.mock.calls.length };
    } finally {
      logged.mockRestore();
    }
  }

  it('resolves 300 ids, names and short ids with a handful of statements, in the order given', async () => {
    const named = [
      ...members.slice(0, 100).map((m) => m.id),
      ...members.slice(100, 200).map((m) => m.name),
      ...members.slice(200).map((m) => m.id.slice(0, 13)),
    ];
    const { result: res, count } = await statements(() => alice().post(`/v1/clusters/${cluster.id}/actions`, { del_nodes: { nodes: named } }));
    expect(res.status).toBe(202);
    const action = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: res.body.action });
    expect(action.inputs).toEqual({ candidates: members.map((m) => m.id), count: 300 });
    // the request's own: token, cluster, the nodes, the action and its outbox row, the transaction
    expect(count).toBeLessThan(25);
  });

  it("names every identity that matched nothing (another project's node is nothing), in the order given", async () => {
    const ghost = randomUUID();
    const res = await alice().post(`/v1/clusters/${cluster.id}/actions`, { del_nodes: { nodes: ['ghost-1', members[0].name, ghost, 'member-9999'] } });
    expect({ status: res.status, message: res.body.error.message }).toEqual({
      status: 400,
      message: `Nodes not found: ['ghost-1', '${ghost}', 'member-9999'].`,
    });
  });

  it('refuses an ambiguous name as a single lookup does', async () => {
    await h.db.dataSource.query(
      `INSERT INTO nodes (id, name, profile_id, project, "user", status) VALUES (gen_random_uuid(), 'member-7', $1, $2, 'alice-id', 'ACTIVE')`,
      [cluster.profile_id, PROJECT_A],
    );
    const res = await alice().post(`/v1/clusters/${cluster.id}/actions`, { del_nodes: { nodes: [members[0].id, 'member-7'] } });
    expect({ status: res.status, message: res.body.error.message }).toEqual({
      status: 400,
      message: "Multiple results found matching the query criteria 'member-7'. Please be more specific.",
    });
  });

  it.each(['del_nodes', 'add_nodes'])(`%s refuses more than ${MAX_NODES_PER_REQUEST} nodes naming the field, before any lookup`, async (key) => {
    const nodes = Array.from({ length: MAX_NODES_PER_REQUEST + 1 }, (_, i) => `node-${i}`);
    const { result: res, count } = await statements(() => alice().post(`/v1/clusters/${cluster.id}/actions`, { [key]: { nodes } }));
    expect({ status: res.status, message: res.body.error.message }).toEqual({
      status: 400,
      message: `Value for 'nodes' must have at most ${MAX_NODES_PER_REQUEST} item(s).`,
    });
    expect(count).toBe(0);
  });
});
