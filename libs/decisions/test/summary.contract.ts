import { randomUUID } from 'node:crypto';
import { IncompleteSnapshotError, PolicyRegistry, groupCounts, summariseNodes, timestampMillis, victimListing } from '@trellis/policies';
import type { ActionEntity, Database } from '@trellis/persistence';
import { createEvaluator, decideAction, type IdSource } from '../src/decide-action';
import { loadSnapshot, type Snapshot } from '../src/load-snapshot';

/**
 * Issue 15: the summarised snapshot PostgreSQL builds (counts per zone, only the candidates listed)
 * is the pure reference `summariseNodes` applied to the whole node list, and decides as it does.
 * Nodes with every edge the SQL must agree with the policies on: no zone, a zone that is not a
 * string, an empty zone, bad nodes of each kind, created_at ties within a millisecond, three profiles
 * (the two oldest created in the same millisecond, holding fewer nodes than some zones list).
 * The unit suite runs it on an in-memory PGlite, the integration suite on PostgreSQL.
 */
export function describeSummaryContract(name: string, open: () => Promise<Database>): void {
describe(`loadSnapshot: summarised clusters (${name})`, () => {
  let db: Database;
  const profiles = [randomUUID(), randomUUID(), randomUUID()];
  const profileCreated = ['2025-06-01T00:00:00Z', '2025-01-01T00:00:00.000500Z', '2025-01-01T00:00:00.000900Z'];
  const deletionCriteria = ['OLDEST_FIRST', 'YOUNGEST_FIRST', 'OLDEST_PROFILE_FIRST', 'RANDOM', null] as const;
  // each criterion with a 20 % scaling policy bound (at least a fifth of each zone listed) and
  // without one (a scale-in by 1 lists a single candidate per zone: the tie order at that boundary
  // is what the SQL must get right)
  const variants = deletionCriteria.flatMap((criterion) => [true, false].map((scalingBound) => ({ criterion, scalingBound })));
  const clusters = variants.map(() => randomUUID());
  const evaluator = createEvaluator(PolicyRegistry.withBuiltins());
  const seqIds = (): IdSource => {
    let n = 0;
    return { uuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, nodeName: () => `node-${++n}` };
  };

  beforeAll(async () => {
    db = await open();
    const q = (sql: string, params: unknown[]) => db.dataSource.query(sql, params);
    for (const [i, id] of profiles.entries()) {
      await q(`INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, $2, 'os.nova.server-1.0', $3, 'p', 'u', $4)`, [
        id,
        `p${i}`,
        { type: 'os.nova.server', version: '1.0', properties: { flavor: 'm1.tiny', image: 'cirros' } },
        profileCreated[i],
      ]);
    }
    const zonePolicy = randomUUID();
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'zones', 'senlin.policy.zone_placement-1.0', $2, 'p', 'u', now())`, [
      zonePolicy,
      { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 50 }] } },
    ]);
    const scaling = randomUUID();
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'in', 'senlin.policy.scaling-1.0', $2, 'p', 'u', now())`, [
      scaling,
      { type: 'senlin.policy.scaling', version: '1.0', properties: { event: 'CLUSTER_SCALE_IN', adjustment: { type: 'CHANGE_IN_PERCENTAGE', number: 20 } } },
    ]);
    await q(
      `INSERT INTO cloud_facts (kind, project, data, fetched_at) VALUES ('availability_zones', '', $1, now())`,
      [{ items: [{ zoneName: 'az1', zoneState: { available: true } }, { zoneName: 'az2', zoneState: { available: true } }] }],
    );
    for (const [c, id] of clusters.entries()) {
      await q(
        `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
         VALUES ($1, $2, $3, 'p', 'u', 0, -1, 60, 3600, 'ACTIVE')`,
        [id, `c${c}`, profiles[0]],
      );
      await q(`INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, true, 300, '{}', now())`, [randomUUID(), id, zonePolicy]);
      if (variants[c].scalingBound) {
        await q(`INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, true, 100, '{}', now())`, [randomUUID(), id, scaling]);
      }
      const deletion = variants[c].criterion;
      if (deletion) {
        const pid = randomUUID();
        await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'del', 'senlin.policy.deletion-1.1', $2, 'p', 'u', now())`, [
          pid,
          { type: 'senlin.policy.deletion', version: '1.1', properties: { criteria: deletion } },
        ]);
        await q(`INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, true, 400, '{}', now())`, [randomUUID(), id, pid]);
      }
      for (let i = 0; i < 60; i++) {
        const zone = i % 11 === 0 ? undefined : i % 13 === 0 ? 7 : i % 17 === 0 ? '' : i % 3 === 0 ? 'az2' : 'az1';
        const status = i % 19 === 0 ? 'ERROR' : i % 23 === 0 ? 'WARNING' : i % 29 === 0 ? 'CREATING' : 'ACTIVE';
        // pairs of nodes share a millisecond (different microseconds): ties broken by cluster order
        const created = i % 31 === 0 ? null : new Date(Date.UTC(2025, 2, 1) + Math.floor(i / 2) * 60_000 + (Math.floor(i / 2) % 5) * 7).toISOString().replace('Z', `${i % 2 ? '9' : '1'}00Z`);
        await q(
          `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", physical_id, index, status, data, metadata, tainted, created_at)
           VALUES ($1, $2, $3, $4, 'p', 'u', $5, $6, $7, $8, '{}', $9, $10)`,
          [randomUUID(), `n${i}`, id, profiles[i % 4 === 0 ? 1 : i % 7 === 0 ? 2 : 0], `srv-${c}-${i}`, 60 - i, status, zone === undefined ? {} : { placement: { zone } }, i % 37 === 0, created],
        );
      }
    }
  });
  afterAll(async () => {
    await db?.close();
  });

  const action = (cluster: string, patch: Partial<ActionEntity>) =>
    ({ id: randomUUID(), action: 'CLUSTER_SCALE_IN', cluster_id: cluster, target: cluster, inputs: {}, data: {}, project: 'p', ...patch }) as ActionEntity;

  const cases: Array<[string, Partial<ActionEntity>]> = [
    ['scale-out', { action: 'CLUSTER_SCALE_OUT', inputs: { count: 3 } }],
    ['scale-in by 1', { action: 'CLUSTER_SCALE_IN', inputs: { count: 1 } }],
    ['scale-in by 2', { action: 'CLUSTER_SCALE_IN', inputs: { count: 2 } }],
    ['scale-in by the scaling policy (20 %; by 1 without one)', { action: 'CLUSTER_SCALE_IN', inputs: {} }],
    ['resize to 41', { action: 'CLUSTER_RESIZE', inputs: { adjustment_type: 'EXACT_CAPACITY', number: 41, strict: true } }],
  ];

  for (const [c, cluster] of clusters.entries()) {
    for (const [label, patch] of cases) {
      const { criterion, scalingBound } = variants[c];
      it(`${criterion ?? 'no deletion policy'}${scalingBound ? '' : ' (no scaling policy)'}, ${label}: the reference summary of the whole list, and the same decision`, async () => {
        const m = db.dataSource.manager;
        const a = action(cluster, patch);
        const now = new Date('2026-11-26T12:00:00.000Z');
        const whole = await loadSnapshot(m, a, 'pre_op', now, { everyNode: true });
        const part = await loadSnapshot(m, a, 'pre_op', now);
        const wc = whole.cluster!;
        const zones = summariseNodes(wc.nodes, { listed: 0, orders: [] }, timestampMillis).summary.zones;
        const listing = victimListing({ action: a.action, inputs: a.inputs }, whole.policies, wc, wc.nodes.length, { zones, cloud: whole.cloud });
        if (!listing) {
          // a random pick: every node, no summary
          expect(part).toStrictEqual(whole);
          return;
        }
        const reference = summariseNodes(wc.nodes, listing, timestampMillis);
        expect(part.cluster).toStrictEqual({ ...wc, nodes: reference.nodes, summary: reference.summary });
        if (a.action !== 'CLUSTER_SCALE_OUT') expect(part.cluster!.nodes.length).toBeLessThan(wc.nodes.length);

        const decide = (s: Snapshot) => {
          try {
            return decideAction(a, s, evaluator, seqIds());
          } catch (e) {
            if (e instanceof IncompleteSnapshotError) return 'incomplete';
            throw e;
          }
        };
        const full = decide(whole);
        const summarised = decide(part);
        expect(full).not.toBe('incomplete');
        expect(summarised).not.toBe('incomplete');
        const { input: _w, ...fullRest } = full as Exclude<typeof full, string>;
        const { input: _p, ...partRest } = summarised as Exclude<typeof summarised, string>;
        expect(partRest).toStrictEqual(fullRest);
        // a decision that does something: victims chosen or nodes placed, no failure
        expect(fullRest.failure).toBeNull();
        const changed = a.action === 'CLUSTER_SCALE_OUT' ? fullRest.plan.create_nodes : fullRest.plan.delete_nodes;
        expect(changed.length).toBeGreaterThan(0);
      });
    }
  }

  // the AFTER chain of a successful action: built-in post_op hooks read no node, so the snapshot
  // lists the bad nodes only, and the chain ends the same as on every node
  for (const [c, cluster] of clusters.entries()) {
    const { criterion, scalingBound } = variants[c];
    it(`${criterion ?? 'no deletion policy'}${scalingBound ? '' : ' (no scaling policy)'}: post_op lists the bad nodes only and ends the same`, async () => {
      const m = db.dataSource.manager;
      const now = new Date('2026-11-26T12:00:00.000Z');
      for (const [, patch] of cases) {
        const a = action(cluster, patch);
        const whole = await loadSnapshot(m, a, 'post_op', now, { everyNode: true });
        const part = await loadSnapshot(m, a, 'post_op', now);
        const wc = whole.cluster!;
        const reference = summariseNodes(wc.nodes, { listed: 0, orders: [] }, timestampMillis);
        expect(part.cluster).toStrictEqual({ ...wc, nodes: reference.nodes, summary: reference.summary });
        expect(part.cluster!.nodes.every((n) => n.status !== 'ACTIVE' || n.tainted || !n.created_at)).toBe(true);
        const run = (s: Snapshot) => evaluator.evaluate(s as never, { newId: () => 'id' });
        const full = run(whole);
        expect(run(part)).toStrictEqual(full);
        expect(full.status).toBe('OK');
        // the scaling policy stamps its binding after a scale-in or a scale-out (Senlin checks it
        // AFTER both, whatever its event), not after a resize
        const stamps = scalingBound && a.action !== 'CLUSTER_RESIZE' ? 1 : 0;
        expect(full.binding_updates).toHaveLength(stamps);
      }
    });
  }

  it("counts a plugin-bound cluster's server groups, and reads its post_op whole unless its type decides on a summary", async () => {
    const m = db.dataSource.manager;
    const q = (sql: string, params: unknown[]) => db.dataSource.query(sql, params);
    const cluster = randomUUID();
    const plugin = randomUUID();
    await q(
      `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
       VALUES ($1, 'with-plugin', $2, 'p', 'u', 0, -1, 7, 3600, 'ACTIVE')`,
      [cluster, profiles[0]],
    );
    // every shape a recorded group can have: a string (twice), another, a number, null, none, a
    // placement that is not an object, and a bad node (listed) in a group
    const placements: unknown[] = [
      { zone: 'az1', servergroup: 'g-b' },
      { zone: 'az2', servergroup: 'g-b' },
      { zone: 'az1', servergroup: 'g-a' },
      { zone: 'az1', servergroup: 7 },
      { zone: 'az2', servergroup: null },
      { zone: 'az2' },
      'not an object',
    ];
    for (const [i, placement] of placements.entries()) {
      await q(
        `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", physical_id, index, status, data, metadata, tainted, created_at)
         VALUES ($1, $2, $3, $4, 'p', 'u', $5, $6, $7, $8, '{}', false, now())`,
        [randomUUID(), `pn${i}`, cluster, profiles[0], `srv-p-${i}`, i + 1, i === 1 ? 'ERROR' : 'ACTIVE', { placement }],
      );
    }
    await q(`INSERT INTO policies (id, name, type, spec, project, "user", created_at) VALUES ($1, 'raa', 'trellis.policy.role_anti_affinity-1.0', $2, 'p', 'u', now())`, [
      plugin,
      { type: 'trellis.policy.role_anti_affinity', version: '1.0', properties: { roles: ['db'] } },
    ]);
    // disabled: a binding that may be enabled again counts
    await q(`INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at) VALUES ($1, $2, $3, false, 300, '{}', now())`, [
      randomUUID(),
      cluster,
      plugin,
    ]);
    const now = new Date('2026-11-26T12:00:00.000Z');
    const withPlugin = [...PolicyRegistry.withBuiltins().summarisedTypes(), 'trellis.policy.role_anti_affinity'];
    for (const patch of [{ action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } }, { action: 'CLUSTER_SCALE_IN', inputs: { count: 1 } }]) {
      const a = action(cluster, patch);
      const whole = await loadSnapshot(m, a, 'pre_op', now, { everyNode: true });
      expect(whole.cluster!.nodes).toHaveLength(7);
      const pre = await loadSnapshot(m, a, 'pre_op', now);
      expect(pre.cluster!.summary!.groups).toStrictEqual(groupCounts(whole.cluster!.nodes));
      expect(pre.cluster!.summary!.groups).toStrictEqual([{ id: 'g-a', nodes: 1 }, { id: 'g-b', nodes: 2 }]);
      // post_op: whole where the plugin's type is not known to decide on a summary
      const post = await loadSnapshot(m, a, 'post_op', now);
      expect(post).toStrictEqual(await loadSnapshot(m, a, 'post_op', now, { everyNode: true }));
      expect(post.cluster!.summary).toBeUndefined();
      const summarisedPost = await loadSnapshot(m, a, 'post_op', now, { summarisedTypes: withPlugin });
      const reference = summariseNodes(whole.cluster!.nodes, { listed: 0, orders: [] }, timestampMillis);
      expect(summarisedPost.cluster).toStrictEqual({ ...whole.cluster, nodes: reference.nodes, summary: { ...reference.summary, groups: groupCounts(whole.cluster!.nodes) } });
    }
  });

  it('counts no server group where only built-in policies are bound', async () => {
    const a = action(clusters[0], { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } });
    const pre = await loadSnapshot(db.dataSource.manager, a, 'pre_op', new Date('2026-11-26T12:00:00.000Z'));
    expect(pre.cluster!.summary).toBeDefined();
    expect('groups' in pre.cluster!.summary!).toBe(false);
  });
});
}
