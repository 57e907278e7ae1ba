import { createHash, randomUUID } from 'node:crypto';
import type request from 'supertest';
import { PROJECT_A, TOKENS, gatewayOnBus } from '../testing/gateway-harness';

/**
 * Who sees hypervisor and host names (docs/SECURITY.md): a member of a project sees
 * Nova's hostId (sha224 of project + host) wherever a view would name a host; its project admin and
 * a cloud admin see the names. Over REST and over RPC, which call the same services.
 */
describe('host visibility in the views', () => {
  /** Nova's nova.utils.generate_hostid, written out independently of the code under test */
  const hostId = (host: string) => createHash('sha224').update(PROJECT_A + host).digest('hex');
  const ids = {
    profile: randomUUID(),
    cluster: randomUUID(),
    nodes: [randomUUID(), randomUUID()],
    action: randomUUID(),
    finding: randomUUID(),
    event: randomUUID(),
  };

  const { t, rest, rpc: rpcAs } = gatewayOnBus({
    seed: async (db) => {
      const q = (sql: string, params: unknown[] = []) => db.dataSource.query(sql, params);
      await q(
        `INSERT INTO profiles (id, name, type, spec, project, "user", created_at)
         VALUES ($1, 'vis', 'os.nova.server-1.0', $2, $3, 'alice-id', now())`,
        [ids.profile, { type: 'os.nova.server', version: '1.0', properties: { flavor: 'm1.tiny', image: 'cirros' } }, PROJECT_A],
      );
      await q(
        `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status, next_index, created_at, init_at)
         VALUES ($1, 'vis', $2, $3, 'alice-id', 0, -1, 2, 3600, 'ACTIVE', 3, now(), now())`,
        [ids.cluster, ids.profile, PROJECT_A],
      );
      for (const [i, host] of [[0, 'host-1'], [1, 'host-10']] as const) {
        await q(
          `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", physical_id, index, status, data, init_at, created_at)
           VALUES ($1, $2, $3, $4, $5, 'alice-id', $6, $7, 'ACTIVE', $8, now(), now())`,
          [ids.nodes[i], `vis-${i + 1}`, ids.cluster, ids.profile, PROJECT_A, `srv-${i + 1}`, i + 1, { placement: { zone: 'az1', host } }],
        );
      }
      const hypervisors = ['host-1', 'host-10'].map((h, i) => ({ id: String(i + 1), hypervisor_hostname: h, service: { host: h }, state: 'up' }));
      await q(
        `INSERT INTO cloud_facts (kind, project, data, fetched_at) VALUES
           ('availability_zones', '', $1, now()), ('hypervisors', '', $2, now()), ('host_zones', '', $3, now()),
           ('server_groups', $4, $5, now()), ('server_groups', 'alt-demo-project', $6, now())`,
        [
          { items: [{ zoneName: 'az1', zoneState: { available: true } }] },
          { items: hypervisors },
          // host-99 is known from the host → zone map only
          { items: [{ zoneName: 'az1', hosts: ['host-1', 'host-10', 'host-99'] }] },
          PROJECT_A,
          { items: [{ id: 'demo-group', name: 'demo', policy: 'anti-affinity', rules: {}, members: ['srv-1'] }] },
          { items: [{ id: 'alt-secret-group', name: 'secret', policy: 'affinity', rules: {}, members: ['srv-alt'] }] },
        ],
      );
      // a repair that replaced nodes, its decision, a drift finding and an event, all naming hosts
      await q(
        `INSERT INTO actions (id, name, cluster_id, target, action, cause, timeout, status, status_reason, outputs, project, "user", created_at)
         VALUES ($1, 'repair', $2, $2, 'CLUSTER_REPAIR', 'RPC Request', 3600, 'SUCCEEDED', 'Replaced vis-1 on host host-10.', $3, $4, 'alice-id', now())`,
        [ids.action, ids.cluster, { drift: { replaced: [{ node_id: ids.nodes[1], host: 'host-10', zone: 'az1' }] } }, PROJECT_A],
      );
      const input = {
        hook: 'pre_op',
        cluster: { id: ids.cluster, nodes: [{ id: ids.nodes[0], data: { placement: { host: 'host-1' } }, server: { host: 'host-1' } }] },
        cloud: { availability_zones: ['az1'], hypervisors, server_groups: [] },
      };
      await q(`INSERT INTO decisions (action_id, hook, input, output, plan, trace, created_at) VALUES ($1, 'pre_op', $2, $3, $4, $5, now())`, [
        ids.action,
        input,
        { status: 'OK', reason: 'host-10 is shared, host-1 is not' },
        { action: 'CLUSTER_REPAIR', create: [] },
        JSON.stringify([{ verdict: 'OK', reason: "Nodes share the host 'host-10'." }]),
      ]);
      await q(
        `INSERT INTO cluster_findings (id, cluster_id, project, kind, fingerprint, host, node_ids, message, status, found_at, last_seen_at)
         VALUES ($1, $2, $3, 'hosts_shared', 'f', 'host-1', $4, $5, 'OPEN', now(), now())`,
        [ids.finding, ids.cluster, PROJECT_A, JSON.stringify(ids.nodes), "Nodes vis-1, vis-2 of the anti-affinity server group g share the host 'host-1'."],
      );
      await q(
        `INSERT INTO events (id, timestamp, oid, oname, otype, cluster_id, level, "user", project, action, status, status_reason, meta_data)
         VALUES ($1, now(), $2, 'vis-2', 'NODE', $3, 20, 'alice-id', $4, 'CLUSTER_REPAIR', 'REPLACED', $5, $6)`,
        [ids.event, ids.nodes[1], ids.cluster, PROJECT_A, 'Node vis-0 replaced by vis-2 (hosts_shared) on host host-99 in zone az1.', { host: 'host-10' }],
      );
    },
  });
  const rpc = async (token: string, pattern: string, params?: Record<string, unknown>, body?: unknown) => {
    const reply = await rpcAs(token, pattern, params, body);
    expect(reply.status).toBe(200);
    return reply.body as unknown;
  };

  /** every view below, as one caller gets it over REST and over RPC */
  async function views(token: string) {
    const ok = async (res: request.Response) => {
      expect(res.status).toBe(200);
      return res.body as unknown;
    };
    return {
      decision: await ok(await rest(token).get(`/v1/actions/${ids.action}/decision`)),
      decisionRpc: await rpc(token, 'action.decision', { action_id: ids.action }),
      // a scale-in by 2 lists both nodes in its summarised snapshot (a scale-out lists none: issue 15)
      dryRun: await ok(await rest(token).post(`/v1/clusters/${ids.cluster}/actions?dry_run=true`, { scale_in: { count: 2 } })),
      dryRunRpc: await rpc(token, 'cluster.scale_in', { cluster_id: ids.cluster, dry_run: 'true' }, { count: 2 }),
      nodes: await ok(await rest(token).get('/v1/nodes')),
      nodesRpc: await rpc(token, 'node.list'),
      node: await ok(await rest(token).get(`/v1/nodes/${ids.nodes[0]}?show_details=true`)),
      nodeRpc: await rpc(token, 'node.show', { node_id: ids.nodes[0], show_details: 'true' }),
      findings: await ok(await rest(token).get(`/v1/clusters/${ids.cluster}/findings`)),
      events: await ok(await rest(token).get('/v1/events')),
      eventsRpc: await rpc(token, 'event.list'),
      event: await ok(await rest(token).get(`/v1/events/${ids.event}`)),
      actions: await ok(await rest(token).get('/v1/actions')),
      action: await ok(await rest(token).get(`/v1/actions/${ids.action}`)),
      actionRpc: await rpc(token, 'action.show', { action_id: ids.action }),
    };
  }

  /** the hosts each view names, by name */
  const named: Record<string, string[]> = {
    decision: ['host-1', 'host-10'],
    dryRun: ['host-1', 'host-10'],
    nodes: ['host-1', 'host-10'],
    node: ['host-1'],
    findings: ['host-1'],
    events: ['host-99', 'host-10'],
    event: ['host-99', 'host-10'],
    actions: ['host-10'],
    action: ['host-10'],
  };
  const namesOf = (view: string) => named[view.replace(/Rpc$/, '')];

  it('shows a project member hostIds, never a host or hypervisor name, and never another project’s server group', async () => {
    const seen = await views(TOKENS.alice);
    for (const [view, body] of Object.entries(seen)) {
      const text = JSON.stringify(body);
      expect({ view, leaks: text.match(/host-\d+/g) }).toEqual({ view, leaks: null });
      for (const host of namesOf(view)) expect({ view, host, shown: text.includes(hostId(host)) }).toEqual({ view, host, shown: true });
      expect(text).not.toContain('alt-secret-group');
    }
    const decision = (seen.decision as { decision: { input: { cloud: Record<string, unknown> } } }).decision;
    expect(decision.input.cloud.hypervisors).toEqual([]);
    expect(decision.input.cloud.hidden).toEqual({ hypervisors: '2 hypervisors; hypervisor and host names are shown to admins only' });
    const node = (seen.node as { node: { data: any; details: any } }).node;
    expect(node.data.placement.host).toBe(hostId('host-1'));
    expect(node.details.placement.host).toBe(hostId('host-1'));
    const finding = (seen.findings as { findings: Array<{ host: string; message: string }> }).findings[0];
    expect(finding.host).toBe(hostId('host-1'));
    expect(finding.message).toBe(`Nodes vis-1, vis-2 of the anti-affinity server group g share the host '${hostId('host-1')}'.`);
    // the dry run still decided with the project's own server group
    const dry = seen.dryRun as { decision: { input: { cloud: { server_groups: Array<{ id: string }>; hypervisors: unknown[] } } } };
    expect(dry.decision.input.cloud.server_groups.map((g) => g.id)).toEqual(['demo-group']);
    // no bound policy reads the hypervisors: the snapshot carries none (the stored decision above
    // has them, and a member sees only how many)
    expect(dry.decision.input.cloud.hypervisors).toBeUndefined();
  });

  it('reads the facts again when the nova-worker rewrote them: a host it added is hidden from the next request', async () => {
    // a member's request, so the gateway holds the facts' names as they are now
    expect((await rest(TOKENS.alice).get('/v1/events')).status).toBe(200);
    const q = (sql: string, params: unknown[] = []) => t.db.dataSource.query(sql, params);
    // a host the facts did not list, named only in an event's text (no `host` member names it)
    const event = randomUUID();
    await q(
      `INSERT INTO events (id, timestamp, oid, oname, otype, cluster_id, level, "user", project, action, status, status_reason, meta_data)
       VALUES ($1, now(), $2, 'vis-1', 'NODE', $3, 20, 'alice-id', $4, 'CLUSTER_CHECK', 'OK', 'Node vis-1 answers on host-77.', '{}')`,
      [event, ids.nodes[0], ids.cluster, PROJECT_A],
    );
    // as the refresher writes them (one statement a kind); fetched_at kept, so only the row version differs
    await q(`UPDATE cloud_facts SET data = $1 WHERE project = '' AND kind = 'host_zones'`, [
      { items: [{ zoneName: 'az1', hosts: ['host-1', 'host-10', 'host-99', 'host-77'] }] },
    ]);
    for (const res of [await rest(TOKENS.alice).get('/v1/events'), await rest(TOKENS.alice).get(`/v1/events/${event}`)]) {
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain('host-77');
      expect(text).toContain(`answers on ${hostId('host-77')}.`);
    }
    await q(`DELETE FROM events WHERE id = $1`, [event]);
  });

  it('hides a host a node recorded after the gateway read the project\'s hosts, one the facts never listed, from the next request', async () => {
    const q = (sql: string, params: unknown[] = []) => t.db.dataSource.query(sql, params);
    const eventNaming = async (host: string) => {
      const id = randomUUID();
      await q(
        `INSERT INTO events (id, timestamp, oid, oname, otype, cluster_id, level, "user", project, action, status, status_reason, meta_data)
         VALUES ($1, now(), $2, 'vis-2', 'NODE', $3, 20, 'alice-id', $4, 'CLUSTER_CHECK', 'OK', $5, '{}')`,
        [id, ids.nodes[1], ids.cluster, PROJECT_A, `Node vis-2 answers on ${host}.`],
      );
      return id;
    };
    const seenBy = async (event: string) => {
      const res = await rest(TOKENS.alice).get(`/v1/events/${event}`);
      expect(res.status).toBe(200);
      return JSON.stringify(res.body);
    };
    // a member's request: the gateway holds the project's recorded hosts as they are now
    const before = await eventNaming('host-55');
    expect(await seenBy(before)).toContain('answers on host-55.'); // no node or fact names it: not a host
    // a node records host-55 (the facts have not listed it: a host gone from them, or not yet in them)
    await q(`UPDATE nodes SET data = jsonb_set(data, '{placement,host}', '"host-55"') WHERE id = $1`, [ids.nodes[1]]);
    const after = await eventNaming('host-55');
    for (const event of [before, after]) {
      const text = await seenBy(event);
      expect(text).not.toContain('host-55');
      expect(text).toContain(`answers on ${hostId('host-55')}.`);
    }
    // the node moves on: the name it recorded stays hidden
    await q(`UPDATE nodes SET data = jsonb_set(data, '{placement,host}', '"host-10"') WHERE id = $1`, [ids.nodes[1]]);
    expect(await seenBy(before)).toContain(`answers on ${hostId('host-55')}.`);
    // the facts drop host-10 (decommissioned), which a node still records: still hidden, as host-55
    const facts: Array<{ kind: string; data: unknown }> = await q(`SELECT kind, data FROM cloud_facts WHERE project = '' AND kind IN ('hypervisors', 'host_zones')`);
    await q(`UPDATE cloud_facts SET data = '{"items": []}' WHERE project = '' AND kind IN ('hypervisors', 'host_zones')`);
    const gone = await eventNaming('host-10');
    try {
      for (const event of [gone, before]) {
        const text = await seenBy(event);
        expect(text).not.toMatch(/host-(10|55)\b/);
      }
    } finally {
      for (const f of facts) await q(`UPDATE cloud_facts SET data = $2 WHERE project = '' AND kind = $1`, [f.kind, f.data]);
      await q(`DELETE FROM events WHERE id = ANY($1)`, [[before, after, gone]]);
    }
  });

  it('shows a project admin and a cloud admin the names', async () => {
    const seen = await views(TOKENS.carol);
    for (const [view, body] of Object.entries(seen)) {
      const text = JSON.stringify(body);
      for (const host of namesOf(view)) {
        expect({ view, host, named: new RegExp(`(^|[^A-Za-z0-9._-])${host}([^A-Za-z0-9._-]|$)`).test(text) }).toEqual({ view, host, named: true });
      }
      expect(text).not.toContain(hostId('host-1'));
      expect(text).not.toContain('alt-secret-group');
    }
    const decision = (seen.decision as { decision: { input: { cloud: Record<string, unknown> } } }).decision;
    expect(decision.input.cloud.hypervisors).toHaveLength(2);
    expect(decision.input.cloud.hidden).toBeUndefined();
    // a cloud admin reads another project's decision only by id, with the names
    const admin = await rest(TOKENS.admin).get(`/v1/actions/${ids.action}/decision`);
    if (admin.status === 200) expect(JSON.stringify(admin.body)).toContain('"host-10"');
  });
});
