import { randomUUID } from 'node:crypto';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { waitFor } from '@trellis/testing/processes/wait-for';
import { silentLogger } from '@trellis/common';
import { NovaError } from '@trellis/nova';
import { ApplyWorkOrderUseCase } from '../orders/apply-work-order.usecase';
import { FIXTURE_TRUST, FakeNova, fakeAccess, insertActionOf, insertNode, storeFixtureTrust, storingActions, workOrder, workerOn } from '../testing/worker-fixtures';
import type { NovaPort } from '@trellis/nova';
import { runServerOp } from './server-ops';

describe('ops orders: node check, recover and operations in Nova', () => {
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

  /** a node whose server is ACTIVE in the fake Nova */
  async function nodeWithServer() {
    const { id } = await nova.createServer({ name: 'srv', imageRef: 'cirros', flavorRef: 'm1.tiny', networks: 'none' });
    nova.servers.get(id)!.status = 'ACTIVE';
    const node = await insertNode(db, { cluster_id: null, status: 'ACTIVE', status_reason: 'Creation succeeded', physical_id: id });
    return { node, serverId: id };
  }

  const opsOrder = (action: string, nodeId: string, physicalId: string | null, op: string, params: Record<string, unknown> = {}) => {
    const actionId = randomUUID();
    return workOrder(actionId, { action, kind: 'ops', server_ops: [{ node_id: nodeId, physical_id: physicalId, op, params }] });
  };

  it('check: a server Nova no longer has turns the node ERROR with Senlin\'s reason and clears its server; the check succeeds', async () => {
    const { node, serverId } = await nodeWithServer();
    nova.servers.delete(serverId);
    const order = opsOrder('NODE_CHECK', node.id, serverId, 'check');

    await w.apply.execute(order);

    expect(await w.node(node.id)).toMatchObject({
      status: 'ERROR',
      status_reason: `Failed in found server '${serverId}': Instance ${serverId} could not be found.`,
      physical_id: null,
    });
    const [result] = await w.results(order.action_id);
    expect(result).toMatchObject({ outcome: 'SUCCEEDED', nodes: [{ node_id: node.id, status: 'ERROR', physical_id: null }] });
    expect(w.trustsAsked).toContain(FIXTURE_TRUST);
  });

  it('operation: reboot reaches Nova with the asked type, the node is ACTIVE "Operation \'reboot\' succeeded"', async () => {
    const { node, serverId } = await nodeWithServer();
    const order = opsOrder('NODE_OPERATION', node.id, serverId, 'reboot', { type: 'HARD' });

    await w.apply.execute(order);

    expect(nova.actions).toEqual([{ id: serverId, action: { action: 'reboot', type: 'HARD' } }]);
    expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });
    expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'SUCCEEDED' });
  });

  it('operation refused by Nova (409): the node is ERROR with Senlin\'s "Failed in ..." and the action fails', async () => {
    const { node, serverId } = await nodeWithServer();
    nova.refuseActions = `Cannot 'stop' instance ${serverId} while it is in vm_state stopped`;
    const order = opsOrder('NODE_OPERATION', node.id, serverId, 'stop');

    await w.apply.execute(order);

    const reason = `Failed in stop server '${serverId}': Cannot 'stop' instance ${serverId} while it is in vm_state stopped.`;
    expect(await w.node(node.id)).toMatchObject({ status: 'ERROR', status_reason: reason });
    expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'FAILED', reason: `Node operation 'stop' failed: ${reason}` });
  });

  it('a cluster operation runs its nodes side by side, at most `concurrency` at a time, and reports them in the order\'s order', async () => {
    const made: Array<Awaited<ReturnType<typeof nodeWithServer>>> = [];
    for (let i = 0; i < 6; i++) made.push(await nodeWithServer());
    let inFlight = 0;
    let maxInFlight = 0;
    let calls = 0;
    // the first four calls wait for one another (at most 5 s: a worker running fewer at once then
    // shows as maxInFlight < 4), whatever else slows the worker down; the last two go straight on
    let fourthArrived: () => void = () => undefined;
    const four = new Promise<void>((r) => (fourthArrived = r));
    const serverAction = nova.serverAction.bind(nova);
    nova.serverAction = async (id, action) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      if (++calls === 4) fourthArrived();
      if (calls <= 4) await Promise.race([four, new Promise((r) => setTimeout(r, 5_000))]);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      // the last node's server is refused: the action's reason names it, though others finished after it
      if (id === made[5].serverId) throw new NovaError({ service: 'compute', status: 409, method: 'POST', path: `/servers/${id}/action`, serviceMessage: 'Cannot reboot while it is resizing.' });
      return serverAction(id, action);
    };
    const order = workOrder(randomUUID(), {
      action: 'CLUSTER_OPERATION',
      kind: 'ops',
      server_ops: made.map(({ node, serverId }) => ({ node_id: node.id, physical_id: serverId, op: 'reboot', params: {} })),
    });

    await w.apply.execute(order);

    expect(maxInFlight).toBe(4);
    const [result] = await w.results(order.action_id);
    expect(result.nodes.map((n) => n.node_id)).toEqual(made.map(({ node }) => node.id));
    expect(result.nodes.map((n) => n.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE', 'ERROR']);
    expect(result).toMatchObject({ outcome: 'FAILED', reason: expect.stringContaining('Cannot reboot while it is resizing') });
  });

  it('after an outage stops a cluster operation part way, the next try asks Nova only for what it had not done', async () => {
    const made: Array<Awaited<ReturnType<typeof nodeWithServer>>> = [];
    for (let i = 0; i < 6; i++) made.push(await nodeWithServer());
    const serverAction = nova.serverAction.bind(nova);
    let outage = true;
    nova.serverAction = async (id, action) => {
      if (outage && id === made[2].serverId) {
        throw new NovaError({ service: 'compute', status: 503, method: 'POST', path: `/servers/${id}/action`, serviceMessage: 'Service Unavailable' });
      }
      return serverAction(id, action);
    };
    const order = workOrder(randomUUID(), {
      action: 'CLUSTER_OPERATION',
      kind: 'ops',
      server_ops: made.map(({ node, serverId }) => ({ node_id: node.id, physical_id: serverId, op: 'reboot', params: {} })),
    });

    const first = await w.apply.execute(order);

    expect(first.retryInMs).toBeGreaterThan(0);
    // the operations Nova completed meanwhile (which ones depends on timing) are kept with the order
    const rebootedFirst = nova.actions.map((a) => a.id);
    expect(rebootedFirst.length).toBeGreaterThan(0);
    expect(rebootedFirst).not.toContain(made[2].serverId);
    expect(await w.opsRecorded(order.action_id)).toEqual(made.filter((m) => rebootedFirst.includes(m.serverId)).map((m) => m.node.id).sort());

    outage = false;
    await db.dataSource.query('UPDATE work_orders SET next_attempt_at = clock_timestamp() WHERE action_id = $1', [order.action_id]);
    await w.apply.execute(order, { redelivered: true });

    // every server rebooted once in all
    expect(nova.actions.map((a) => a.id).sort()).toEqual(made.map((m) => m.serverId).sort());
    const [result] = await w.results(order.action_id);
    expect(result).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(result.nodes.map((n) => [n.node_id, n.status])).toEqual(made.map(({ node }) => [node.id, 'ACTIVE']));
    // the record is the unfinished order's only: it goes with the transaction that finishes it
    expect(await w.opsRecorded(order.action_id)).toEqual([]);
  });

  it('a worker that dies part way through a cluster operation leaves what Nova did: the one taking over asks only for the rest', async () => {
    const made: Array<Awaited<ReturnType<typeof nodeWithServer>>> = [];
    for (let i = 0; i < 6; i++) made.push(await nodeWithServer());
    const serverAction = nova.serverAction.bind(nova);
    // the first worker's reboot of the third server never returns: the worker is gone (killed, or
    // replaced in a rolling upgrade) with five servers rebooted
    let hang: ((e: Error) => void) | null = null;
    let dead = true;
    nova.serverAction = async (id, action) => {
      if (dead && id === made[2].serverId) return new Promise((_, reject) => (hang = reject));
      return serverAction(id, action);
    };
    const order = workOrder(randomUUID(), {
      action: 'CLUSTER_OPERATION',
      kind: 'ops',
      server_ops: made.map(({ node, serverId }) => ({ node_id: node.id, physical_id: serverId, op: 'reboot', params: {} })),
    });
    const others = made.filter((_, i) => i !== 2);

    const first = w.apply.execute(order);
    await waitFor('the five reboots recorded', async () => (await w.opsRecorded(order.action_id)).length === others.length, { timeoutMs: 10_000, everyMs: 20 });
    expect(nova.actions.map((a) => a.id).sort()).toEqual(others.map((m) => m.serverId).sort());

    // its lease runs out (its heartbeat stopped with it); a redelivery on another worker takes the order over
    dead = false;
    await db.dataSource.query(`UPDATE work_orders SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE action_id = $1`, [order.action_id]);
    const second = workerOn(db, nova);
    await second.apply.execute(order, { redelivered: true });

    // every server rebooted once in all: the five by the dead worker, the third by the new holder
    expect(nova.actions.map((a) => a.id).sort()).toEqual(made.map((m) => m.serverId).sort());
    const [result] = await w.results(order.action_id);
    expect(result).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(result.nodes.map((n) => [n.node_id, n.status])).toEqual(made.map(({ node }) => [node.id, 'ACTIVE']));
    expect(await w.opsRecorded(order.action_id)).toEqual([]);
    // the old holder's last call ends at last: the order is no longer its to record
    hang!(new Error('connection reset'));
    await first;
    expect(await w.results(order.action_id)).toHaveLength(1);
  });

  it('a worker that dies while a server settles leaves the request Nova accepted: the one taking over waits for it, and asks for nothing again', async () => {
    const made = [await nodeWithServer(), await nodeWithServer(), await nodeWithServer()];
    const serverAction = nova.serverAction.bind(nova);
    // the second server's reboot is accepted and then takes its time
    nova.serverAction = async (id, action) => {
      await serverAction(id, action);
      if (id === made[1].serverId) nova.servers.get(id)!.status = 'REBOOT';
    };
    const order = workOrder(randomUUID(), {
      action: 'CLUSTER_OPERATION',
      kind: 'ops',
      server_ops: made.map(({ node, serverId }) => ({ node_id: node.id, physical_id: serverId, op: 'reboot', params: {} })),
    });

    const first = w.apply.execute(order);
    // two outcomes and the accepted request of the third
    await waitFor('three records', async () => (await w.opsRecorded(order.action_id)).length === 3, { timeoutMs: 10_000, everyMs: 20 });
    expect(nova.actions).toHaveLength(3);
    // the first worker dies while it waits; its lease runs out and another worker takes the order over
    await db.dataSource.query(`UPDATE work_orders SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE action_id = $1`, [order.action_id]);
    const second = workerOn(db, nova).apply.execute(order, { redelivered: true });
    nova.servers.get(made[1].serverId)!.status = 'ACTIVE';
    await second;

    // each server rebooted once: the accepted reboot was waited for, not asked for again
    expect(nova.actions.map((a) => a.id).sort()).toEqual(made.map((m) => m.serverId).sort());
    const [result] = await w.results(order.action_id);
    expect(result).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(result.nodes.map((n) => [n.node_id, n.status])).toEqual(made.map(({ node }) => [node.id, 'ACTIVE']));
    expect(await w.opsRecorded(order.action_id)).toEqual([]);
    await first;
    expect(await w.results(order.action_id)).toHaveLength(1);
  });

  it('a take-over reuses the outcomes an earlier release kept on the order (work_orders.ops_done)', async () => {
    const made = [await nodeWithServer(), await nodeWithServer()];
    const order = workOrder(randomUUID(), {
      action: 'CLUSTER_OPERATION',
      kind: 'ops',
      server_ops: made.map(({ node, serverId }) => ({ node_id: node.id, physical_id: serverId, op: 'reboot', params: {} })),
    });
    // as the release before left an order its try stopped on: the first server's reboot kept, put off
    await insertActionOf(db, order);
    await db.dataSource.query(
      `INSERT INTO work_orders (action_id, cluster_id, payload, status, groups, created_at, ops_done)
       VALUES ($1, NULL, $2, 'APPLYING', '{}', now(), $3)`,
      [order.action_id, JSON.stringify(order), JSON.stringify({ [made[0].node.id]: { ok: true, detail: null, node: { status: 'ACTIVE', reason: "Operation 'reboot' succeeded" } } })],
    );

    await w.apply.execute(order, { redelivered: true });

    expect(nova.actions.map((a) => a.id)).toEqual([made[1].serverId]);
    const [result] = await w.results(order.action_id);
    expect(result.nodes.map((n) => [n.node_id, n.status])).toEqual(made.map(({ node }) => [node.id, 'ACTIVE']));
  });

  it('recover by reboot is a HARD reboot unless asked otherwise; the node is ACTIVE "Recovery succeeded"', async () => {
    const { node, serverId } = await nodeWithServer();
    const order = opsOrder('NODE_RECOVER', node.id, serverId, 'reboot');

    await w.apply.execute(order);

    expect(nova.actions).toEqual([{ id: serverId, action: { action: 'reboot', type: 'HARD' } }]);
    expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: 'Recovery succeeded' });
  });

  it('a refused trust fails the action without a Nova call and leaves the node as it was', async () => {
    const { node, serverId } = await nodeWithServer();
    w.refuseTrust(FIXTURE_TRUST);
    const order = opsOrder('NODE_OPERATION', node.id, serverId, 'reboot');

    await w.apply.execute(order);

    expect(nova.actions).toEqual([]);
    expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: 'Creation succeeded' });
    const [result] = await w.results(order.action_id);
    expect(result.outcome).toBe('FAILED');
    expect(result.reason).toContain(FIXTURE_TRUST);
  });

  describe('update to a new profile (NODE_UPDATE, CLUSTER_UPDATE)', () => {
    /** an ACTIVE server booted by an earlier action, with Trellis's tags, on m1.tiny from image-old */
    async function taggedNode(over: Record<string, unknown> = {}) {
      const made = await nodeWithServer();
      Object.assign(nova.servers.get(made.serverId)!, {
        imageId: 'image-old',
        flavor: { id: null, name: 'm1.tiny' },
        metadata: { trellis_action: 'a-create', trellis_node: made.node.id, old: 'x' },
        ...over,
      });
      return made;
    }

    it('rebuilds from the new image with the new name, resizes and confirms, replaces the metadata keeping Trellis\'s tags', async () => {
      const { node, serverId } = await taggedNode();
      const order = opsOrder('NODE_UPDATE', node.id, serverId, 'update', { image: 'image-new', name: 'web-1', flavor: 'm1.small', metadata: { tier: 'web' } });

      await w.apply.execute(order);

      expect(nova.actions.map((a) => a.action)).toEqual([
        { action: 'rebuild', imageRef: 'image-new', name: 'web-1' },
        { action: 'resize', flavorRef: 'm1.small' },
        { action: 'confirmResize' },
      ]);
      expect(nova.updates).toEqual([{ id: serverId, metadata: { tier: 'web', trellis_action: 'a-create', trellis_node: node.id } }]);
      expect(nova.servers.get(serverId)).toMatchObject({ name: 'web-1', imageId: 'image-new', status: 'ACTIVE', flavor: { name: 'm1.small' } });
      expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: 'Update succeeded' });
      expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'SUCCEEDED', nodes: [{ node_id: node.id, status: 'ACTIVE' }] });
      // every change to the project's server is made with the action owner's trust
      expect(w.trustsAsked).toEqual([FIXTURE_TRUST]);
    });

    it('without a new image a new name is a rename (PUT), not a rebuild', async () => {
      const { node, serverId } = await taggedNode();
      await w.apply.execute(opsOrder('NODE_UPDATE', node.id, serverId, 'update', { name: 'web-2' }));

      expect(nova.actions).toEqual([]);
      expect(nova.updates).toEqual([{ id: serverId, name: 'web-2' }]);
    });

    it('a resize left waiting by an earlier try is confirmed, not asked for again', async () => {
      const { node, serverId } = await taggedNode({ status: 'VERIFY_RESIZE', flavor: { id: null, name: 'm1.small' } });
      await w.apply.execute(opsOrder('CLUSTER_UPDATE', node.id, serverId, 'update', { flavor: 'm1.small' }));

      expect(nova.actions.map((a) => a.action)).toEqual([{ action: 'confirmResize' }]);
      expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: 'Update succeeded' });
    });

    it('a resize that ends in ERROR fails the node with Senlin\'s "Failed in updating server" and Nova\'s fault', async () => {
      const { node, serverId } = await taggedNode();
      nova.resizeFault = 'No valid host was found.';
      const order = opsOrder('NODE_UPDATE', node.id, serverId, 'update', { flavor: 'm1.large' });

      await w.apply.execute(order);

      const reason = `Failed in updating server '${serverId}': No valid host was found.`;
      expect(await w.node(node.id)).toMatchObject({ status: 'ERROR', status_reason: reason });
      expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'FAILED', reason: `Node update failed: ${reason}` });
    });

    it('a cluster\'s nodes one after the other: a node without a server fails, the others are updated; only those are reported ACTIVE', async () => {
      const good = await taggedNode();
      const bare = await insertNode(db, { cluster_id: null, status: 'ERROR', status_reason: 'Creation failed', physical_id: null });
      const order = workOrder(randomUUID(), {
        action: 'CLUSTER_UPDATE',
        kind: 'ops',
        server_ops: [
          { node_id: bare.id, physical_id: null, op: 'update', params: { flavor: 'm1.small' } },
          { node_id: good.node.id, physical_id: good.serverId, op: 'update', params: { flavor: 'm1.small' } },
        ],
      });

      await w.apply.execute(order);

      expect(await w.node(bare.id)).toMatchObject({ status: 'ERROR', status_reason: 'Creation failed' });
      expect(await w.node(good.node.id)).toMatchObject({ status: 'ACTIVE', status_reason: 'Update succeeded' });
      const [result] = await w.results(order.action_id);
      expect(result).toMatchObject({ outcome: 'FAILED', reason: `Failed in updating nodes: the node ${bare.id} has no server` });
      expect(result.nodes.map((n) => [n.node_id, n.status])).toEqual([[bare.id, 'ERROR'], [good.node.id, 'ACTIVE']]);
    });

    it('a transient Nova error defers the update with the node UPDATING; once the retry budget is spent the node fails with the error', async () => {
      const { node, serverId } = await taggedNode();
      const resize = nova.serverAction.bind(nova);
      nova.serverAction = async (id, action) => {
        if (action.action === 'resize') throw new NovaError({ service: 'compute', status: 503, method: 'POST', path: `/servers/${id}/action`, serviceMessage: 'Service Unavailable' });
        return resize(id, action);
      };
      const order = opsOrder('CLUSTER_UPDATE', node.id, serverId, 'update', { flavor: 'm1.small' });

      expect((await w.apply.execute(order)).retryInMs).toBeGreaterThan(0);
      expect(await w.node(node.id)).toMatchObject({ status: 'UPDATING', status_reason: 'Update in progress' });
      expect(await w.results(order.action_id)).toEqual([]);

      await db.dataSource.query('UPDATE work_orders SET next_attempt_at = now() WHERE action_id = $1', [order.action_id]);
      const exhausted = new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, silentLogger, {
        concurrency: 1,
        leaseSeconds: 30,
        retry: { baseMs: 1_000, maxMs: 1_000, giveUpAfterSeconds: 0 },
      });
      await exhausted.execute(order, { redelivered: true });

      expect((await w.node(node.id))!).toMatchObject({ status: 'ERROR', status_reason: expect.stringContaining('Service Unavailable') });
      expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'FAILED' });
    });

    it('a server Nova no longer has fails the update with Senlin\'s text', async () => {
      const { node, serverId } = await taggedNode();
      nova.servers.delete(serverId);
      await w.apply.execute(opsOrder('NODE_UPDATE', node.id, serverId, 'update', { image: 'image-new' }));

      expect(await w.node(node.id)).toMatchObject({ status: 'ERROR', status_reason: `Failed in updating server '${serverId}': Instance ${serverId} could not be found.` });
    });
  });

  describe('waiting for a server to settle', () => {
    /** the server answers `status` to the next `polls` looks after an action, then what the action left */
    class SlowNova extends FakeNova {
      hold = { polls: 0, status: 'REBOOT' };
      override async getServer(id: string) {
        const server = await super.getServer(id);
        if (!server || this.hold.polls <= 0 || this.actions.length === 0) return server;
        this.hold.polls--;
        return { ...server, status: this.hold.status };
      }
    }

    it('waits for Nova as long as the order\'s build timeout allows, not half the claim (a slow cloud is not a failure)', async () => {
      const slow = new SlowNova();
      const { access } = fakeAccess(db, slow);
      // a 1 s claim: its half (the old bound) is 0.5 s; Nova here takes about 1 s to settle the reboot
      const apply = storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, access, silentLogger, { concurrency: 1, leaseSeconds: 1, pollIntervalMs: 25 }));
      const { id } = await slow.createServer({ name: 'srv', imageRef: 'cirros', flavorRef: 'm1.tiny', networks: 'none' });
      slow.servers.get(id)!.status = 'ACTIVE';
      const node = await insertNode(db, { cluster_id: null, status: 'ACTIVE', status_reason: 'Creation succeeded', physical_id: id });
      slow.hold.polls = 40;
      const order = opsOrder('NODE_OPERATION', node.id, id, 'reboot');

      await apply.execute(order);

      expect(slow.hold.polls).toBe(0);
      expect(await w.node(node.id)).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });
      expect((await w.results(order.action_id))[0]).toMatchObject({ outcome: 'SUCCEEDED' });
    });

    it('stops waiting once its action has ended (cancelled), with that as the node\'s reason; no further Nova call', async () => {
      const slow = new SlowNova();
      const { id } = await slow.createServer({ name: 'srv', imageRef: 'cirros', flavorRef: 'm1.tiny', networks: 'none' });
      slow.servers.get(id)!.status = 'ACTIVE';
      slow.hold.polls = Number.MAX_SAFE_INTEGER;
      let looks = 0;
      const outcome = await runServerOp({
        nova: slow as unknown as NovaPort,
        order: opsOrder('NODE_OPERATION', 'node-1', id, 'reboot'),
        op: { node_id: 'node-1', physical_id: id, op: 'reboot', params: {} },
        waitMs: 3_600_000,
        pollMs: 1,
        nodeStatus: 'ACTIVE',
        nodeReason: '',
        ended: async () => (++looks >= 3 ? 'CANCELLED' : null),
        endedCheckMs: 0,
      });

      expect(outcome).toMatchObject({ ok: false, node: { status: 'ERROR' } });
      expect(outcome.detail).toBe(`Failed in rebooting server '${id}': the action ended CANCELLED while the server was REBOOT.`);
      expect(slow.actions).toHaveLength(1);
    });
  });
});
