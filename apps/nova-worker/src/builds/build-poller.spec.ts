import { randomUUID } from 'node:crypto';
import { currentLogContext, type LogContext, type Logger } from '@trellis/common';
import { leaseTakeovers } from '@trellis/observability';
import { metricValue } from '@trellis/observability/testing';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { NovaError } from '@trellis/nova';
import { FIXTURE_TRUST, FakeNova, insertNode, serverFor, storeFixtureTrust, workOrder, workerOn } from '../testing/worker-fixtures';
import { CLOCK_SLACK_MS, FULL_LIST_EVERY_MS, LIST_FROM } from './build-poller';
import { CHANGES_SLACK_MS } from '../nova-changes';

describe('BuildPoller', () => {
  let db: Database;
  let nova: FakeNova;
  let w: ReturnType<typeof workerOn>;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    // each test sees only its own nodes in CREATING or DELETING
    await db.dataSource.query(`DELETE FROM nodes`);
    await storeFixtureTrust(db);
    nova = new FakeNova();
    w = workerOn(db, nova);
  });

  /** an order creating one server per node, applied: the nodes are CREATING */
  async function building(nodes: number) {
    const actionId = randomUUID();
    const rows = [];
    for (let i = 0; i < nodes; i++) rows.push(await insertNode(db, { action_id: actionId }));
    await w.apply.execute(workOrder(actionId, { create_servers: rows.map((n) => serverFor(n)) }));
    return { actionId, nodes: rows };
  }

  it('records a server that became ACTIVE with its zone and host, and reports the order SUCCEEDED', async () => {
    const { actionId, nodes } = await building(1);
    const server = nova.activate(nodes[0].id, 'az-real', 'compute-7');

    expect(await w.poller.tick()).toBe(1);

    const row = await w.node(nodes[0].id);
    expect(row).toMatchObject({
      status: 'ACTIVE',
      status_reason: 'Creation succeeded',
      lease_owner: null,
      lease_expires_at: null,
      data: { placement: { zone: 'az-real', host: 'compute-7' }, kept: 'by the worker' },
    });
    expect(row!.created_at).toBeInstanceOf(Date);
    expect((await w.order(actionId)).status).toBe('DONE');
    const reports = await w.results(actionId);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      outcome: 'SUCCEEDED',
      reason: 'All servers reached their final state.',
      nodes: [{ node_id: nodes[0].id, status: 'ACTIVE', physical_id: server.id, zone: 'az-real', host: 'compute-7', reason: null }],
    });
  });

  it('deletes a second server Nova made for a node whose create answer was lost, once the node is ACTIVE, and keeps the recorded one', async () => {
    nova.loseFirstCreateAnswer = true;
    const { actionId, nodes } = await building(1);
    const building_ = await w.node(nodes[0].id);
    expect(building_!.data).toMatchObject({ create_uncertain: true });
    const both = [...nova.servers.values()].filter((s) => s.metadata.trellis_node === nodes[0].id);
    expect(both).toHaveLength(2);
    const kept = both.find((s) => s.id === building_!.physical_id)!;
    const extra = both.find((s) => s.id !== building_!.physical_id)!;
    Object.assign(kept, { status: 'ACTIVE', availabilityZone: 'az1', host: 'compute-1' });
    Object.assign(extra, { status: 'ACTIVE', availabilityZone: 'az2', host: 'compute-2' });

    expect(await w.poller.tick()).toBe(1);

    expect(nova.deleted).toEqual([extra.id]);
    const row = await w.node(nodes[0].id);
    expect(row).toMatchObject({ status: 'ACTIVE', physical_id: kept.id, data: { placement: { zone: 'az1', host: 'compute-1' } } });
    expect(row!.data).not.toHaveProperty('create_uncertain');
    expect((await w.results(actionId))[0]).toMatchObject({ outcome: 'SUCCEEDED' });
  });

  it('keeps a node whose sweep could not list its servers CREATING, and sweeps when it looks again', async () => {
    nova.loseFirstCreateAnswer = true;
    const { nodes } = await building(1);
    for (const s of nova.servers.values()) s.status = 'ACTIVE';
    const listServers = nova.listServers.bind(nova);
    nova.listServers = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:8774');
    };
    await w.poller.tick();
    expect(await w.node(nodes[0].id)).toMatchObject({ status: 'CREATING', data: { create_uncertain: true } });
    expect(nova.deleted).toEqual([]);

    nova.listServers = listServers;
    await w.poller.tick(new Date(Date.now() + 60_000));
    expect(await w.node(nodes[0].id)).toMatchObject({ status: 'ACTIVE' });
    expect(nova.deleted).toHaveLength(1);
  });

  it('records the node ACTIVE once its build deadline passed even when the sweep keeps failing, so that it never loops', async () => {
    nova.loseFirstCreateAnswer = true;
    const { actionId, nodes } = await building(1);
    for (const s of nova.servers.values()) s.status = 'ACTIVE';
    nova.listServers = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:8774');
    };
    await db.dataSource.query(`UPDATE nodes SET build_deadline = now() - interval '1 second' WHERE id = $1`, [nodes[0].id]);
    await w.poller.tick();
    expect(await w.node(nodes[0].id)).toMatchObject({ status: 'ACTIVE' });
    expect((await w.results(actionId))[0]).toMatchObject({ outcome: 'SUCCEEDED' });
  });

  it('lists nothing for a node whose create was certain', async () => {
    const { nodes } = await building(2);
    for (const n of nodes) nova.activate(n.id, 'az1', 'compute-1');
    await w.poller.tick();
    expect(nova.listings).toEqual([]);
    expect(nova.deleted).toEqual([]);
  });

  it('hands a server still building back, due again after one poll interval, and reports nothing', async () => {
    const { actionId, nodes } = await building(1);
    const now = new Date();

    expect(await w.poller.tick(now)).toBe(1);

    const row = await w.node(nodes[0].id);
    expect(row).toMatchObject({ status: 'CREATING', lease_owner: null });
    expect(row!.lease_expires_at!.getTime()).toBeGreaterThanOrEqual(now.getTime() + 1000);
    expect(await w.poller.tick(now)).toBe(0);
    expect(await w.results(actionId)).toEqual([]);
  });

  it("looks at each server in the log context of the request that started the node's action", async () => {
    const { actionId, nodes } = await building(1);
    const seen: Array<LogContext | undefined> = [];
    const getServer = nova.getServer.bind(nova);
    nova.getServer = async (id) => (seen.push(currentLogContext()), getServer(id));
    nova.activate(nodes[0].id, 'az1', 'compute-1');

    await w.poller.tick();

    expect(seen).toEqual([{ correlation_id: `req-${actionId}`, action_id: actionId }]);
  });

  it('leaves a node leased to another worker alone until the lease has expired', async () => {
    const { nodes } = await building(1);
    const until = new Date(Date.now() + 60_000);
    await db.dataSource.query(`UPDATE nodes SET lease_owner = 'worker-other', lease_expires_at = $2 WHERE id = $1`, [nodes[0].id, until]);

    const takeovers = await metricValue(leaseTakeovers, { lease: 'node' });
    expect(await w.poller.tick()).toBe(0);
    expect(await w.poller.tick(new Date(until.getTime() + 1))).toBe(1);
    expect(await metricValue(leaseTakeovers, { lease: 'node' })).toBe(takeovers + 1);
    // a node this poller handed back (no owner) is simply due again: nothing was taken over
    expect(await w.poller.tick(new Date(until.getTime() + 60_000))).toBe(1);
    expect(await metricValue(leaseTakeovers, { lease: 'node' })).toBe(takeovers + 1);
  });

  it('reports an order of two servers once, when the second is final too', async () => {
    const { actionId, nodes } = await building(2);
    nova.activate(nodes[0].id, 'az1', 'compute-1');
    const now = Date.now();

    expect(await w.poller.tick(new Date(now))).toBe(2);
    expect(await w.node(nodes[0].id)).toMatchObject({ status: 'ACTIVE' });
    expect(await w.results(actionId)).toEqual([]);

    const second = [...nova.servers.values()].find((s) => s.metadata.trellis_node === nodes[1].id)!;
    Object.assign(second, { status: 'ERROR', fault: { code: 500, message: 'No valid host was found.' } });
    expect(await w.poller.tick(new Date(now + 2000))).toBe(1);

    const [report, ...more] = await w.results(actionId);
    expect(more).toEqual([]);
    const reason = `Failed in creating server ${second.id} for node ${nodes[1].name}: No valid host was found.`;
    expect(report).toMatchObject({ outcome: 'FAILED', reason });
    expect(report.nodes).toEqual([
      expect.objectContaining({ node_id: nodes[0].id, status: 'ACTIVE', zone: 'az1', host: 'compute-1' }),
      expect.objectContaining({ node_id: nodes[1].id, status: 'ERROR', physical_id: second.id, reason }),
    ]);
  });

  it('gives up a build past its deadline', async () => {
    const { actionId, nodes } = await building(1);
    await db.dataSource.query(`UPDATE nodes SET build_deadline = now() - interval '1 second' WHERE id = $1`, [nodes[0].id]);

    expect(await w.poller.tick()).toBe(1);

    expect((await w.node(nodes[0].id))!.status_reason).toMatch(/did not become ACTIVE before the build timeout \(still BUILD\)\.$/);
    expect(await w.results(actionId)).toMatchObject([{ outcome: 'FAILED' }]);
  });

  it('removes the node of a deleted server and reports DELETED beside a node that left the cluster', async () => {
    const actionId = randomUUID();
    const doomed = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-doomed', action_id: actionId });
    const kept = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-kept', action_id: actionId });
    await w.apply.execute(
      workOrder(actionId, {
        kind: 'delete',
        delete_servers: [
          { node_id: doomed.id, physical_id: 'server-doomed', destroy: true },
          { node_id: kept.id, physical_id: 'server-kept', destroy: false },
        ],
      }),
    );

    expect(await w.poller.tick()).toBe(1);

    expect(await w.node(doomed.id)).toBeNull();
    expect(await w.results(actionId)).toMatchObject([
      {
        outcome: 'SUCCEEDED',
        nodes: [
          { node_id: doomed.id, status: 'DELETED', physical_id: 'server-doomed' },
          { node_id: kept.id, status: 'LEFT', physical_id: 'server-kept' },
        ],
      },
    ]);
  });

  it('records a round of several orders together: a final node, one still building and one whose server is gone, each order on its own', async () => {
    const built = await building(1);
    const waiting = await building(1);
    const deleting = randomUUID();
    const doomed = await insertNode(db, { status: 'ACTIVE', physical_id: 'server-doomed', action_id: deleting });
    await w.apply.execute(workOrder(deleting, { kind: 'delete', delete_servers: [{ node_id: doomed.id, physical_id: 'server-doomed', destroy: true }] }));
    nova.activate(built.nodes[0].id, 'az1', 'compute-1');
    const now = new Date();

    expect(await w.poller.tick(now)).toBe(3);

    expect(await w.node(built.nodes[0].id)).toMatchObject({ status: 'ACTIVE', lease_owner: null, lease_expires_at: null });
    expect(await w.results(built.actionId)).toMatchObject([{ outcome: 'SUCCEEDED', nodes: [{ node_id: built.nodes[0].id, status: 'ACTIVE' }] }]);
    const still = await w.node(waiting.nodes[0].id);
    expect(still).toMatchObject({ status: 'CREATING', lease_owner: null });
    expect(still!.lease_expires_at!.getTime()).toBeGreaterThanOrEqual(now.getTime() + 1000);
    expect(await w.results(waiting.actionId)).toEqual([]);
    expect((await w.order(waiting.actionId)).status).toBe('BUILDING');
    expect(await w.node(doomed.id)).toBeNull();
    expect(await w.results(deleting)).toMatchObject([{ outcome: 'SUCCEEDED', nodes: [{ node_id: doomed.id, status: 'DELETED' }] }]);
    // nothing is left for the next round but the node still building, once it is due
    expect(await w.poller.tick(now)).toBe(0);
    expect(await w.poller.tick(new Date(now.getTime() + 60_000))).toBe(1);
  });

  it('writes nothing over a node a delete order took while its server was looked at: it stays DELETING, and is followed as such', async () => {
    const { nodes } = await building(1);
    const server = nova.activate(nodes[0].id, 'az1', 'compute-1');
    const scaleIn = randomUUID();
    const get = nova.getServer.bind(nova);
    // between the claim and the record: a scale-in's delete order marks the node and deletes its server
    nova.getServer = async (id) => {
      const seen = await get(id);
      await db.dataSource.query(
        `UPDATE nodes SET status = 'DELETING', status_reason = 'Deletion in progress', action_id = $2, lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,
        [nodes[0].id, scaleIn],
      );
      nova.servers.delete(server.id);
      nova.getServer = get;
      return seen && { ...seen };
    };

    expect(await w.poller.tick()).toBe(1);

    expect(await w.node(nodes[0].id)).toMatchObject({ status: 'DELETING', action_id: scaleIn, lease_owner: null });
    // the next round looks at it as a node being deleted: its server is gone, so is the node
    expect(await w.poller.tick()).toBe(1);
    expect(await w.node(nodes[0].id)).toBeNull();
  });

  it('follows a build with the trust its order was applied with, and fails the node at once when Keystone refuses that trust', async () => {
    const { actionId, nodes } = await building(1);
    w.trustsAsked.length = 0;
    w.refuseTrust(FIXTURE_TRUST);

    expect(await w.poller.tick()).toBe(1);

    expect(w.trustsAsked).toEqual([FIXTURE_TRUST]);
    expect(await w.node(nodes[0].id)).toMatchObject({
      status: 'ERROR',
      status_reason: expect.stringContaining('could not be followed while it was built: The Keystone trust trust-user-a-project-a from user user-a'),
    });
    expect((await w.results(actionId))[0]).toMatchObject({ outcome: 'FAILED' });
  });
  it('logs a streak of failed rounds once, waits longer after each (up to 2 s), and says when a round succeeds again', async () => {
    const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
    const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push([level, message, fields]);
    const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
    const looping = workerOn(db, nova, { pollIntervalMs: 20 }, logger);
    let tries = 0;
    const tick = looping.poller.tick.bind(looping.poller);
    let down = true;
    jest.spyOn(looping.poller, 'tick').mockImplementation(async (now?: Date) => {
      tries++;
      if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return tick(now);
    });
    looping.poller.start();
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const triesWhileDown = tries;
      down = false;
      await new Promise((r) => setTimeout(r, 2_300));
      // every 20 ms that would be 50 tries in a second; 40, 80, 160, 320 ms… between them: 5 or so
      expect(triesWhileDown).toBeGreaterThanOrEqual(3);
      expect(triesWhileDown).toBeLessThanOrEqual(8);
      expect(lines.filter(([, m]) => m.startsWith('build poll'))).toEqual([
        ['error', 'build poll failed; will try again', { error: 'connect ECONNREFUSED 127.0.0.1:5432' }],
        ['info', 'build polls succeed again', { failures: expect.any(Number), failing_for_s: expect.any(Number) }],
      ]);
      // back to its interval once a round succeeds
      const after = tries;
      await new Promise((r) => setTimeout(r, 400));
      expect(tries - after).toBeGreaterThanOrEqual(5);
    } finally {
      await looping.poller.stop();
    }
  });

  describe(`a round with ${LIST_FROM} or more nodes of one owner: one server list instead of a request each`, () => {
    it('lists the servers changed since the order (less the clock slack) once, asks for none, and records them as before', async () => {
      const { actionId, nodes } = await building(LIST_FROM + 2);
      for (const n of nodes) nova.activate(n.id, 'az1', `compute-${n.name}`);
      nova.gets.length = 0;
      const ordered = (await w.order(actionId)).created_at.getTime();

      expect(await w.poller.tick()).toBe(LIST_FROM + 2);

      expect(nova.changeListings.map((d) => d.getTime())).toEqual([ordered - CLOCK_SLACK_MS]);
      expect(nova.gets).toEqual([]);
      for (const n of nodes) expect(await w.node(n.id)).toMatchObject({ status: 'ACTIVE', data: { placement: { zone: 'az1', host: `compute-${n.name}` } } });
      expect(await w.results(actionId)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
    });

    it('lets the rounds right after a list use it (a round takes batchSize nodes), and lists again half a poll interval later', async () => {
      const small = workerOn(db, nova, { batchSize: LIST_FROM, pollIntervalMs: 1000 });
      const { actionId, nodes } = await building(LIST_FROM * 2);
      nova.gets.length = 0;

      expect(await small.poller.tick()).toBe(LIST_FROM);
      for (const n of nodes) nova.activate(n.id, 'az1', 'compute-1');
      expect(await small.poller.tick()).toBe(LIST_FROM);
      expect(nova.changeListings).toHaveLength(1);
      // the second round read the list of the first: it still shows every server building
      for (const n of nodes) expect(await small.node(n.id)).toMatchObject({ status: 'CREATING' });

      await new Promise((r) => setTimeout(r, 600));
      const later = new Date(Date.now() + 2000);
      expect((await small.poller.tick(later)) + (await small.poller.tick(later))).toBe(LIST_FROM * 2);
      expect(nova.changeListings).toHaveLength(2);
      expect(nova.gets).toEqual([]);
      for (const n of nodes) expect(await small.node(n.id)).toMatchObject({ status: 'ACTIVE' });
      expect(await small.results(actionId)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
    });

    it('asks for each server the list left out, and for one in ERROR without its fault (real Nova lists none)', async () => {
      const { actionId, nodes } = await building(LIST_FROM);
      const [missing, faultless, ...rest] = nodes;
      for (const n of rest) nova.activate(n.id, 'az1', 'compute-1');
      nova.activate(missing.id, 'az2', 'compute-2');
      const broken = [...nova.servers.values()].find((s) => s.metadata.trellis_node === faultless.id)!;
      broken.status = 'ERROR';
      const missingId = (await w.node(missing.id))!.physical_id!;
      const list = nova.listServers.bind(nova);
      // the list as Nova gives it: without the server it has not changed yet, without ERROR's fault
      nova.listServers = async (filter) => (await list(filter)).filter((s) => s.id !== missingId).map((s) => (s.id === broken.id ? { ...s } : s));
      const get = nova.getServer.bind(nova);
      nova.getServer = async (id) => {
        const server = await get(id);
        return server && server.id === broken.id ? { ...server, fault: { code: 500, message: 'No valid host was found.' } } : server;
      };
      nova.gets.length = 0;

      await w.poller.tick();

      expect(nova.gets.sort()).toEqual([missingId, broken.id].sort());
      expect(await w.node(missing.id)).toMatchObject({ status: 'ACTIVE', data: { placement: { zone: 'az2' } } });
      expect((await w.node(faultless.id))!.status_reason).toMatch(/No valid host was found\.$/);
      expect(await w.results(actionId)).toMatchObject([{ outcome: 'FAILED' }]);
    });

    it('asks for each server when the list fails, and looks at fewer nodes of one owner one by one', async () => {
      const many = await building(LIST_FROM);
      for (const n of many.nodes) nova.activate(n.id, 'az1', 'compute-1');
      nova.listFailure = new NovaError({ service: 'compute', status: 503, method: 'GET', path: '/servers/detail', serviceMessage: 'busy' });
      nova.gets.length = 0;

      await w.poller.tick();

      expect(nova.gets).toHaveLength(LIST_FROM);
      expect(await w.results(many.actionId)).toMatchObject([{ outcome: 'SUCCEEDED' }]);

      nova.listFailure = null;
      const few = await building(LIST_FROM - 1);
      for (const n of few.nodes) nova.activate(n.id, 'az1', 'compute-1');
      nova.gets.length = 0;
      await w.poller.tick();
      expect(nova.changeListings).toEqual([]);
      expect(nova.gets).toHaveLength(LIST_FROM - 1);
    });

    /** this worker's clock, moved by hand, and Nova's, `skew` ahead of it (as a cloud's may be) */
    function clocks(skew: number) {
      let local = Date.now();
      const spy = jest.spyOn(Date, 'now').mockImplementation(() => local);
      const sync = (behind = 0) => (nova.clock = local + skew - behind);
      sync();
      return {
        get local() {
          return local;
        },
        advance(ms: number, hostsBehind = 0) {
          local += ms;
          sync(hostsBehind);
        },
        restore: () => spy.mockRestore(),
      };
    }
    const second = (ms: number) => Math.floor(ms / 1000) * 1000;

    it('between whole lists asks Nova only for what changed since the previous list on its own clock (less the slack), and keeps the rest as it was', async () => {
      const small = workerOn(db, nova, { batchSize: 100, pollIntervalMs: 200 });
      const skew = 5 * 60_000 + 300;
      const clock = clocks(skew);
      try {
        const { actionId, nodes } = await building(LIST_FROM + 4);
        const returned: number[] = [];
        const list = nova.listServers.bind(nova);
        nova.listServers = async (filter) => {
          const servers = await list(filter);
          returned.push(servers.length);
          return servers;
        };
        nova.gets.length = 0;
        const ordered = (await small.order(actionId)).created_at.getTime();
        const first = clock.local;
        // 1. a whole list: every server of the order, all building; Nova's clock read from it
        expect(await small.poller.tick(new Date(first + 1000))).toBe(LIST_FROM + 4);
        // 2. twenty seconds later three are ACTIVE: the changes since the first list (Nova's time,
        // whole seconds, less the slack) hold the servers booted in its second too
        clock.advance(20_000);
        const second1 = clock.local;
        const [a, b, c, d, e] = nodes;
        for (const n of [a, b, c]) nova.activate(n.id, 'az1', 'compute-1');
        expect(await small.poller.tick(new Date(clock.local + 1000))).toBe(LIST_FROM + 4);
        // 3. five seconds later two more: only the servers changed since the second list come back
        clock.advance(5_000);
        for (const n of [d, e]) nova.activate(n.id, 'az2', 'compute-2');
        expect(await small.poller.tick(new Date(clock.local + 1000))).toBe(LIST_FROM + 1);

        const offset0 = second(first + skew) - first;
        const offset1 = second(second1 + skew) - second1;
        expect(nova.changeListings.map((t) => t.getTime())).toEqual([
          ordered - CLOCK_SLACK_MS,
          first + offset0 - CHANGES_SLACK_MS,
          second1 + Math.max(offset0, offset1) - CHANGES_SLACK_MS,
        ]);
        expect(returned).toEqual([LIST_FROM + 4, LIST_FROM + 4, 5]);
        expect(nova.gets).toEqual([]);
        for (const n of [a, b, c]) expect(await small.node(n.id)).toMatchObject({ status: 'ACTIVE', data: { placement: { zone: 'az1' } } });
        for (const n of [d, e]) expect(await small.node(n.id)).toMatchObject({ status: 'ACTIVE', data: { placement: { zone: 'az2' } } });
        // the ones the last list left out are as the lists before showed them: building, not asked for
        for (const n of nodes.slice(5)) expect(await small.node(n.id)).toMatchObject({ status: 'CREATING' });
      } finally {
        clock.restore();
      }
    });

    it(`lists whole again ${FULL_LIST_EVERY_MS / 1000} s after the last whole list: a change the changes missed (hosts whose clocks are behind) is found then`, async () => {
      const small = workerOn(db, nova, { batchSize: 100, pollIntervalMs: 200 });
      const clock = clocks(0);
      try {
        const { actionId, nodes } = await building(LIST_FROM);
        const ordered = (await small.order(actionId)).created_at.getTime();
        expect(await small.poller.tick(new Date(clock.local + 1000))).toBe(LIST_FROM);
        const first = clock.local;
        // every server ACTIVE 10 s later, written by hosts whose clocks are five minutes behind (more
        // than the changes' slack, less than the whole list's)
        clock.advance(10_000, 5 * 60_000);
        for (const n of nodes) nova.activate(n.id, 'az1', 'compute-1');
        expect(await small.poller.tick(new Date(clock.local + 1000))).toBe(LIST_FROM);
        for (const n of nodes) expect(await small.node(n.id)).toMatchObject({ status: 'CREATING' });

        clock.advance(FULL_LIST_EVERY_MS);
        expect(await small.poller.tick(new Date(clock.local + 1000))).toBe(LIST_FROM);
        expect(nova.changeListings.map((t) => t.getTime())).toEqual([
          ordered - CLOCK_SLACK_MS,
          first + (second(first) - first) - CHANGES_SLACK_MS,
          ordered - CLOCK_SLACK_MS,
        ]);
        for (const n of nodes) expect(await small.node(n.id)).toMatchObject({ status: 'ACTIVE' });
        expect(await small.results(actionId)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
        expect(nova.gets).toEqual([]);
      } finally {
        clock.restore();
      }
    });

    it('takes a server listed DELETED as gone: a node being deleted leaves, one being built failed', async () => {
      const deleting = randomUUID();
      const doomed = [];
      for (let i = 0; i < LIST_FROM; i++) {
        const node = await insertNode(db, { status: 'ACTIVE', physical_id: `server-doomed-${i}`, action_id: deleting });
        const id = node.physical_id!;
        nova.servers.set(id, { id, name: node.name, status: 'ACTIVE', availabilityZone: 'az1', host: 'compute-1', hypervisorHostname: null, hostId: null, metadata: {}, fault: null });
        doomed.push(node);
      }
      await w.apply.execute(workOrder(deleting, { kind: 'delete', delete_servers: doomed.map((n) => ({ node_id: n.id, physical_id: n.physical_id, destroy: true })) }));
      const built = await building(LIST_FROM);
      for (const s of nova.servers.values()) s.status = 'DELETED';
      nova.gets.length = 0;

      await w.poller.tick();

      expect(nova.gets).toEqual([]);
      for (const n of doomed) expect(await w.node(n.id)).toBeNull();
      expect(await w.results(deleting)).toMatchObject([{ outcome: 'SUCCEEDED' }]);
      expect((await w.node(built.nodes[0].id))!.status_reason).toMatch(/disappeared from Nova while it was being built\.$/);
      expect(await w.results(built.actionId)).toMatchObject([{ outcome: 'FAILED' }]);
    });
  });
});
