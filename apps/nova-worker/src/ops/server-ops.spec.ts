import { randomUUID } from 'node:crypto';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { FIXTURE_TRUST, FakeNova, insertNode, storeFixtureTrust, workOrder, workerOn } from '../testing/worker-fixtures';

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
});
