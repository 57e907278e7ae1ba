import { randomUUID } from 'node:crypto';
import { workOrderAs, type WorkOrderMessage } from '@trellis/contracts';
import { NovaError } from '@trellis/nova';
import { ActionEntity, row, type Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { FIXTURE_TRUST, FakeNova, insertActionOf, insertNode, insertOrderLeftApplying, serverFor, storeFixtureTrust, workOrder, workerOn } from '../testing/worker-fixtures';


/** Nova places a server (gives it a host) when it is first looked at */
function placeWhenLookedAt(nova: FakeNova): void {
  const get = nova.getServer.bind(nova);
  nova.getServer = async (id) => {
    const server = nova.servers.get(id);
    if (server && !server.host) server.host = `host-of-${server.name}`;
    return get(id);
  };
}

describe('ApplyWorkOrderUseCase', () => {
  let db: Database;
  let nova: FakeNova;
  let w: ReturnType<typeof workerOn>;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await storeFixtureTrust(db);
    nova = new FakeNova();
    w = workerOn(db, nova);
  });

  it('records a created server as CREATING until its deadline, keeps the node data and adds the group id to its placement', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, {
      create_groups: [{ ref: 'ref:g', name: 'web-group', policy: 'anti-affinity' }],
      create_servers: [serverFor(node, { zone: 'az1', servergroup: 'ref:g' })],
    });
    const before = Date.now();

    const result = await w.apply.execute(order);

    expect(result).toEqual({ applied: true, created: 1, reused: 0, failed: 0, deleting: 0 });
    const stored = await w.order(actionId);
    expect(stored.status).toBe('BUILDING');
    const groupId = stored.groups['ref:g'];
    expect(groupId).toEqual(expect.any(String));
    const row = await w.node(node.id);
    expect(row).toMatchObject({
      status: 'CREATING',
      status_reason: 'Creation in progress',
      physical_id: [...nova.servers.keys()][0],
      lease_owner: null,
      lease_expires_at: null,
      data: { placement: { zone: 'az1', servergroup: groupId }, kept: 'by the worker' },
    });
    expect(row!.build_deadline!.getTime()).toBeGreaterThanOrEqual(before + 600_000);
    expect(await w.results(actionId)).toEqual([]);
  });

  it('boots every server of an order from the order\'s profile, and each from its own in an order of schema_version 1 (an engine of the release before, or of this one writing for older workers)', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const [na, nb, nc] = [await insertNode(db, { action_id: a }), await insertNode(db, { action_id: b }), await insertNode(db, { action_id: c })];
    const profile = { flavor: 'm1.small', image: 'ubuntu', user_data: '#cloud-config', metadata: { tier: 'db' }, networks: [] };

    await w.apply.execute(workOrder(a, { create_servers: [serverFor(na)], profile }));
    await w.apply.execute(workOrder(b, { schema_version: 1, profile: undefined, create_servers: [{ ...serverFor(nb), profile }] }));
    const downgraded = workOrderAs(workOrder(c, { create_servers: [serverFor(nc)], profile }), 1);
    expect(downgraded.schema_version).toBe(1);
    await w.apply.execute(downgraded);

    expect(nova.created).toHaveLength(3);
    const [fromV2, fromV1, fromDowngraded] = nova.created;
    const { metadata: md, name: _nd, ...restDowngraded } = fromDowngraded;
    expect({ ...md, trellis_node: '', trellis_action: '' }).toEqual({ ...fromV2.metadata, trellis_node: '', trellis_action: '' });
    expect(fromV2).toMatchObject({ flavorRef: 'm1.small', imageRef: 'ubuntu', userData: '#cloud-config', metadata: { tier: 'db' } });
    const { metadata: m2, name: _n2, ...rest2 } = fromV2;
    const { metadata: m1, name: _n1, ...rest1 } = fromV1;
    expect(rest1).toEqual(rest2);
    expect(restDowngraded).toEqual(rest2);
    expect({ ...m1, trellis_node: '', trellis_action: '' }).toEqual({ ...m2, trellis_node: '', trellis_action: '' });
  });

  it('asks Nova for nothing once the action has ended, and leaves the reason the node was failed with first', async () => {
    const actionId = randomUUID();
    const now = new Date();
    await db.dataSource.getRepository(ActionEntity).insert(
      row<ActionEntity>({
        id: actionId, name: 'scale', cluster_id: null, target: randomUUID(), action: 'CLUSTER_SCALE_OUT', cause: 'RPC Request',
        owner: null, interval: -1, start_time: now.getTime() / 1000, end_time: now.getTime() / 1000, timeout: 3, status: 'FAILED',
        status_reason: 'CLUSTER_SCALE_OUT timed out after 3 s.', inputs: {}, outputs: {}, data: {}, depends_on: [], depended_by: [],
        project: 'p', user: 'u', domain: null, created_at: now, updated_at: now, lease_owner: null, lease_expires_at: null, attempts: 1,
      }),
    );
    // the deadline supervisor failed the node while the worker was still retrying through an outage
    const node = await insertNode(db, { action_id: actionId, status: 'ERROR', status_reason: 'CLUSTER_SCALE_OUT timed out after 3 s.' });

    await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));

    expect(nova.servers.size).toBe(0);
    expect(await w.node(node.id)).toMatchObject({ status: 'ERROR', status_reason: 'CLUSTER_SCALE_OUT timed out after 3 s.' });
  });

  it('sees a cancel that comes after the claim at the next server request: the servers asked for before it stay, no more are', async () => {
    const actionId = randomUUID();
    const now = new Date();
    await db.dataSource.getRepository(ActionEntity).insert(
      row<ActionEntity>({
        id: actionId, name: 'scale', cluster_id: null, target: randomUUID(), action: 'CLUSTER_SCALE_OUT', cause: 'RPC Request',
        owner: null, interval: -1, start_time: now.getTime() / 1000, end_time: null, timeout: 60, status: 'RUNNING',
        status_reason: '', inputs: {}, outputs: {}, data: {}, depends_on: [], depended_by: [],
        project: 'p', user: 'u', domain: null, created_at: now, updated_at: now, lease_owner: null, lease_expires_at: null, attempts: 1,
      }),
    );
    await cancelledWhileTheFirstBoots(actionId, actionId);
  });

  /**
   * Two servers of one hard anti-affinity group in one zone, the second asked for only once the
   * first has a host (a wave of its own), in the order `orderId` (an action's, or a step's of
   * `actionId`); `actionId` is cancelled while Nova builds the first: the second is never asked for.
   */
  async function cancelledWhileTheFirstBoots(actionId: string, orderId: string, over: Partial<WorkOrderMessage> = {}) {
    const [a, b] = [await insertNode(db, { action_id: actionId }), await insertNode(db, { action_id: actionId })];
    const order = workOrder(orderId, {
      ...over,
      create_groups: [{ ref: 'ref:g', name: 'apart', policy: 'anti-affinity' }],
      create_servers: [serverFor(a, { zone: 'az1', servergroup: 'ref:g' }), serverFor(b, { zone: 'az1', servergroup: 'ref:g' })],
    });
    const create = nova.createServer.bind(nova);
    nova.createServer = async (request) => {
      await db.dataSource.query(`UPDATE actions SET status = 'CANCELLED' WHERE id = $1`, [actionId]);
      return create(request);
    };
    placeWhenLookedAt(nova);

    expect(await w.apply.execute(order)).toMatchObject({ applied: true, created: 1, failed: 1 });
    expect(nova.created.map((r) => r.name)).toEqual([a.name]);
    expect(await w.node(a.id)).toMatchObject({ status: 'CREATING' });
    expect(await w.node(b.id)).toMatchObject({ status: 'ERROR', status_reason: `The action ended CANCELLED before the server of node ${b.name} was requested.` });
    return a;
  }

  it("a step's order (a repair's replacements) sees a cancel of the action the step is part of, at the claim and at the next server request", async () => {
    const actionId = randomUUID();
    await insertActionOf(db, workOrder(actionId, { action: 'CLUSTER_REPAIR' }));
    const step = async () => {
      const id = randomUUID();
      await db.dataSource.query(
        `INSERT INTO action_steps (id, action_id, seq, kind, status, detail, created_at) VALUES ($1, $2, 1, 'replace', 'RUNNING', '{}', now())`,
        [id, actionId],
      );
      return id;
    };
    // the repair is cancelled while Nova builds the first replacement
    const a = await cancelledWhileTheFirstBoots(actionId, await step(), { action: 'CLUSTER_REPAIR' });

    // a later step's order of the cancelled repair asks Nova for nothing (the claim read the action's end)
    const [c] = [await insertNode(db, { action_id: actionId })];
    await w.apply.execute(workOrder(await step(), { action: 'CLUSTER_REPAIR', create_servers: [serverFor(c)] }));
    expect(nova.created.map((r) => r.name)).toEqual([a.name]);
    expect(await w.node(c.id)).toMatchObject({ status: 'ERROR', status_reason: `The action ended CANCELLED before the server of node ${c.name} was requested.` });
  });

  it('boots the second server of a hard anti-affinity group in a zone only once Nova has placed the first', async () => {
    const actionId = randomUUID();
    const [a, b, c] = [await insertNode(db, { action_id: actionId }), await insertNode(db, { action_id: actionId }), await insertNode(db, { action_id: actionId })];
    const order = workOrder(actionId, {
      create_groups: [{ ref: 'ref:g', name: 'apart', policy: 'anti-affinity' }],
      create_servers: [
        serverFor(a, { zone: 'az2', servergroup: 'ref:g' }),
        serverFor(b, { zone: 'az2', servergroup: 'ref:g' }),
        serverFor(c, { zone: 'az1', servergroup: 'ref:g' }),
      ],
    });
    // what Nova had placed when each server was asked for, and Nova placing a server when it is looked at
    const placedAtCreate: string[][] = [];
    const create = nova.createServer.bind(nova);
    nova.createServer = async (request) => {
      placedAtCreate.push([...nova.servers.values()].filter((s) => s.host).map((s) => s.name));
      return create(request);
    };
    placeWhenLookedAt(nova);

    expect(await w.apply.execute(order)).toMatchObject({ applied: true, created: 3, failed: 0 });
    expect(nova.created.map((r) => r.name)).toEqual([a.name, c.name, b.name]);
    // a and c (other zone) together, b after a had a host
    expect(placedAtCreate).toEqual([[], [], [a.name, c.name]]);
  });

  it('records a server Nova refused as ERROR and reports the order FAILED at once', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId, data: {} });
    nova.refuseCreates = 'Invalid flavorRef provided.';

    const result = await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));

    expect(result).toMatchObject({ applied: true, created: 0, failed: 1 });
    const row = await w.node(node.id);
    expect(row).toMatchObject({ status: 'ERROR', physical_id: null, data: { placement: {} } });
    expect(row!.status_reason).toMatch(/^Nova refused to create the server for node .*Invalid flavorRef provided\./);
    expect((await w.order(actionId)).status).toBe('DONE');
    const [report, ...more] = await w.results(actionId);
    expect(more).toEqual([]);
    expect(report).toMatchObject({ outcome: 'FAILED', reason: row!.status_reason });
    expect(report.nodes).toEqual([
      { node_id: node.id, status: 'ERROR', physical_id: null, zone: null, host: null, reason: row!.status_reason },
    ]);
  });

  it('keeps the order for a later attempt, writing nothing, when a node of it is not in the database', async () => {
    const actionId = randomUUID();
    const ghost = await insertNode(db);
    await db.dataSource.query('DELETE FROM nodes WHERE id = $1', [ghost.id]);

    const result = await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(ghost)] }));

    expect(result).toMatchObject({ applied: false, retryInMs: expect.any(Number) });
    expect(await w.order(actionId)).toMatchObject({
      status: 'APPLYING',
      attempts: 1,
      lease_token: null,
      last_error: `node ${ghost.id} of the work order is not in the database`,
    });
    expect(await w.results(actionId)).toEqual([]);
  });

  it('acknowledges a second delivery of an order being built without touching Nova', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    await w.apply.execute(order);

    const again = await w.apply.execute({ ...order, message_id: randomUUID() }, { redelivered: true });

    expect(again.applied).toBe(false);
    expect(nova.created).toHaveLength(1);
    expect(await w.results(actionId)).toEqual([]);
  });

  it('takes over an order left APPLYING once its holder\'s lease ran out, not before, and reuses the server it finds by the node tag', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    // the previous worker made the server and died before recording it; its lease is still running
    await insertOrderLeftApplying(db, order);
    const { id: serverId } = await nova.createServer({
      name: node.name,
      imageRef: 'cirros',
      flavorRef: 'm1.tiny',
      networks: 'none',
      metadata: { trellis_node: node.id, trellis_action: actionId },
    });

    const whileLeased = await w.apply.execute(order, { redelivered: true });
    expect(whileLeased.applied).toBe(false);
    await db.dataSource.query(`UPDATE work_orders SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE action_id = $1`, [actionId]);
    const result = await w.apply.execute(order, { redelivered: true });

    expect(result).toEqual({ applied: true, created: 0, reused: 1, failed: 0, deleting: 0 });
    expect(nova.created).toHaveLength(1);
    expect(await w.node(node.id)).toMatchObject({ status: 'CREATING', physical_id: serverId });
  });

  it('marks destroyed nodes DELETING and lets kept ones leave the cluster; the result waits for the deletes', async () => {
    const actionId = randomUUID();
    const doomed = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-doomed', action_id: actionId });
    const kept = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-kept', action_id: actionId });

    const result = await w.apply.execute(
      workOrder(actionId, {
        kind: 'delete',
        delete_servers: [
          { node_id: doomed.id, physical_id: 'server-doomed', destroy: true },
          { node_id: kept.id, physical_id: 'server-kept', destroy: false },
        ],
      }),
    );

    expect(result).toMatchObject({ applied: true, deleting: 2 });
    expect(nova.deleted).toEqual(['server-doomed']);
    expect(await w.node(doomed.id)).toMatchObject({ status: 'DELETING', status_reason: 'Deletion in progress', lease_owner: null });
    expect(await w.node(kept.id)).toMatchObject({ status: 'ACTIVE', cluster_id: null, status_reason: 'Node left cluster', index: -1 });
    expect((await w.order(actionId)).status).toBe('BUILDING');
    expect(await w.results(actionId)).toEqual([]);
  });

  it('deletes the servers side by side, at most `concurrency` requests at a time; a refused one fails its node only', async () => {
    const actionId = randomUUID();
    const doomed = await Promise.all(Array.from({ length: 10 }, (_, i) => insertNode(db, { status: 'ACTIVE', physical_id: `server-${i}`, action_id: actionId })));
    let inFlight = 0;
    let maxInFlight = 0;
    const deleteServer = nova.deleteServer.bind(nova);
    nova.deleteServer = async (id: string) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      if (id === 'server-3') throw new NovaError({ service: 'compute', status: 403, method: 'DELETE', path: `/servers/${id}`, serviceMessage: 'Policy does not allow it.' });
      return deleteServer(id);
    };

    const result = await w.apply.execute(
      workOrder(actionId, { kind: 'delete', delete_servers: doomed.map((n) => ({ node_id: n.id, physical_id: n.physical_id, destroy: true })) }),
    );

    // the fixtures' worker runs 4 requests at a time
    expect(maxInFlight).toBe(4);
    expect(result).toMatchObject({ applied: true, deleting: 10 });
    expect([...nova.deleted].sort()).toEqual(doomed.map((n) => n.physical_id).filter((id) => id !== 'server-3').sort());
    expect(await w.node(doomed[3].id)).toMatchObject({ status: 'ERROR', status_reason: expect.stringContaining('Nova refused to delete server server-3') });
    expect(await w.node(doomed[4].id)).toMatchObject({ status: 'DELETING' });
  });

  it('reports an order once more when it is asked again after it was DONE', async () => {
    const actionId = randomUUID();
    const kept = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-kept', action_id: actionId });
    const order = workOrder(actionId, { kind: 'delete', delete_servers: [{ node_id: kept.id, physical_id: 'server-kept', destroy: false }] });
    await w.apply.execute(order);
    const [first] = await w.results(actionId);
    expect(first).toMatchObject({ outcome: 'SUCCEEDED', nodes: [{ node_id: kept.id, status: 'LEFT', physical_id: 'server-kept' }] });

    const again = await w.apply.execute({ ...order, message_id: randomUUID() });

    expect(again.applied).toBe(false);
    const reports = await w.results(actionId);
    expect(reports).toHaveLength(2);
    expect(reports[1].message_id).not.toBe(first.message_id);
    expect(reports[1]).toMatchObject({ outcome: 'SUCCEEDED', nodes: first.nodes });
  });

  describe('acts as the project that asked', () => {
    it('asks Nova with the trust of the order\'s user and project', async () => {
      const actionId = randomUUID();
      const node = await insertNode(db, { action_id: actionId });
      await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));
      expect(w.trustsAsked).toEqual([FIXTURE_TRUST]);
      expect((await w.node(node.id))?.status).toBe('CREATING');
    });

    it('fails every node and reports FAILED at once, naming user and project, when there is no trust', async () => {
      const actionId = randomUUID();
      const create = await insertNode(db, { action_id: actionId });
      const remove = await insertNode(db, { action_id: actionId, status: 'ACTIVE', physical_id: 'server-x' });
      const order = workOrder(actionId, {
        user: 'user-without-trust',
        create_groups: [{ ref: 'ref:g', name: 'g', policy: 'anti-affinity' }],
        create_servers: [serverFor(create)],
        delete_servers: [{ node_id: remove.id, physical_id: 'server-x', destroy: true }],
      });
      await w.apply.execute(order);
      expect(nova.created).toHaveLength(0);
      expect(nova.groups.size).toBe(0);
      for (const id of [create.id, remove.id]) {
        expect(await w.node(id)).toMatchObject({
          status: 'ERROR',
          status_reason: expect.stringContaining('No Keystone trust from user user-without-trust to Trellis in project project-a'),
        });
      }
      const [result] = await w.results(actionId);
      expect(result).toMatchObject({ outcome: 'FAILED', reason: expect.stringContaining('user-without-trust') });
      expect((await w.order(actionId)).status).toBe('DONE');
    });

    it('fails at once when Keystone refuses the trust, and drops the trust so the next action makes a new one', async () => {
      w.refuseTrust(FIXTURE_TRUST);
      const actionId = randomUUID();
      const node = await insertNode(db, { action_id: actionId });
      await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));
      expect(await w.node(node.id)).toMatchObject({
        status: 'ERROR',
        status_reason: expect.stringMatching(/trust-user-a-project-a from user user-a to Trellis in project project-a can no longer be used/),
      });
      expect((await w.results(actionId))[0].outcome).toBe('FAILED');
      expect(await db.dataSource.query(`SELECT * FROM trusts WHERE trust_id = $1`, [FIXTURE_TRUST])).toEqual([]);
    });
  });

  describe('the record of an order whose every server was accepted (one statement)', () => {
    it('writes the fence and every node in one statement, without a transaction: CREATING, its server, the uncertain marker, no result yet', async () => {
      const actionId = randomUUID();
      const nodes = [await insertNode(db, { action_id: actionId }), await insertNode(db, { action_id: actionId })];
      nova.loseFirstCreateAnswer = true;
      const transactions = jest.spyOn(db.dataSource, 'transaction');
      const before = Date.now();

      const result = await w.apply.execute(workOrder(actionId, { create_servers: nodes.map((n) => serverFor(n, { zone: 'az2' })) }));

      expect(transactions).not.toHaveBeenCalled();
      transactions.mockRestore();
      expect(result).toEqual({ applied: true, created: 2, reused: 0, failed: 0, deleting: 0 });
      expect(await w.order(actionId)).toMatchObject({ status: 'BUILDING', lease_owner: null, lease_token: null, lease_expires_at: null, next_attempt_at: null });
      for (const n of nodes) {
        const stored = await w.node(n.id);
        expect(stored).toMatchObject({
          status: 'CREATING',
          status_reason: 'Creation in progress',
          physical_id: expect.any(String),
          lease_owner: null,
          lease_expires_at: null,
          data: { placement: { zone: 'az1' }, kept: 'by the worker', create_uncertain: true },
        });
        expect(nova.servers.has(stored!.physical_id!)).toBe(true);
        expect(stored!.build_deadline!.getTime()).toBeGreaterThanOrEqual(before + 600_000);
      }
      expect(await w.results(actionId)).toEqual([]);
    });

    it('leaves it to the transaction when a node\'s row names another action: the order is reported at once, as before', async () => {
      const actionId = randomUUID();
      const another = await insertNode(db, { action_id: randomUUID() });
      const transactions = jest.spyOn(db.dataSource, 'transaction');

      const result = await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(another)] }));

      expect(transactions).toHaveBeenCalled();
      transactions.mockRestore();
      expect(result).toEqual({ applied: true, created: 1, reused: 0, failed: 0, deleting: 0 });
      // not pending for this order's action, the node does not hold it back: completeOrderIfDone reports it
      const [reported] = await w.results(actionId);
      expect(reported).toMatchObject({ outcome: 'FAILED', nodes: [{ node_id: another.id, status: 'ERROR', reason: 'Creation in progress' }] });
      expect(await w.node(another.id)).toMatchObject({ status: 'CREATING', physical_id: expect.any(String) });
      expect(await w.order(actionId)).toMatchObject({ status: 'DONE' });
    });

    it('writes nothing when the order was taken over while Nova was called', async () => {
      const actionId = randomUUID();
      const node = await insertNode(db, { action_id: actionId });
      const create = nova.createServer.bind(nova);
      nova.createServer = async (request) => {
        // another worker takes the order over while this one's request is in flight
        await db.dataSource.query(`UPDATE work_orders SET lease_owner = 'other-worker', lease_token = gen_random_uuid() WHERE action_id = $1`, [actionId]);
        return create(request);
      };

      const result = await w.apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));

      expect(result).toEqual({ applied: false, created: 1, reused: 0, failed: 0, deleting: 0 });
      expect(await w.order(actionId)).toMatchObject({ status: 'APPLYING', lease_owner: 'other-worker' });
      expect(await w.node(node.id)).toMatchObject({ status: 'INIT', physical_id: null, build_deadline: null });
      expect(await w.results(actionId)).toEqual([]);
    });
  });
});
