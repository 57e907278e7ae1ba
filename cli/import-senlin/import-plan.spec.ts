import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planImport, senlinServiceStates, senlinTime, serversToRead, type ExistingIds, type ImportOptions, type ServerSeen } from './import-plan';
import type { SenlinRows } from './senlin-rows';

/**
 * The mapping from Senlin's rows to Trellis's, on the rows captured from the real Senlin 14 run of
 * test/openstack/import-senlin.os-spec.ts (IMPORT_SENLIN_CAPTURE): a cluster of 3 nodes made by
 * Senlin with a soft-anti-affinity policy, a zone placement policy, a deletion policy and a webhook
 * receiver, captured after Senlin's engine was stopped.
 */
const FIXTURE: SenlinRows = JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'senlin', 'rows.json'), 'utf8'));
const rows = (): SenlinRows => structuredClone(FIXTURE);
const CLUSTER = FIXTURE.clusters[0];
const ALL: ImportOptions = { projects: [], clusters: [], force: false };
const NOTHING: ExistingIds = { profiles: new Set(), policies: new Set(), clusters: new Set(), nodes: new Set(), receivers: new Set(), trusts: new Set() };

/** Nova as the importer saw it in the real run: each server where the capture says it is */
function novaSees(r: SenlinRows, overrides: Record<string, ServerSeen> = {}): Map<string, ServerSeen> {
  const seen = new Map<string, ServerSeen>();
  r.nodes.forEach((n, i) => {
    if (n.physical_id) seen.set(n.physical_id, { state: 'found', status: 'ACTIVE', zone: i % 3 === 2 ? 'az2' : 'az1', host: `fake-host-${(i % 4) + 1}` });
  });
  for (const [id, s] of Object.entries(overrides)) seen.set(id, s);
  return seen;
}

const clusterUnit = (plan: ReturnType<typeof planImport>) => plan.units.find((u) => u.kind === 'cluster' && u.id === CLUSTER.id)!;

/** the rows with Senlin's engine gone from its service table, as after a clean stop */
function engineStopped(r: SenlinRows): SenlinRows {
  r.services = r.services.filter((s) => s.binary !== 'senlin-engine');
  return r;
}

describe('planImport on rows captured from the real Senlin 14', () => {
  it('keeps ids, names, owners, indexes, metadata, times and physical_ids, and records the zone and host Nova reports', () => {
    const r = rows();
    const seen = novaSees(r);
    const unit = clusterUnit(planImport(r, ALL, NOTHING, seen));
    expect(unit.state).toBe('new');
    expect(unit.blockers).toEqual([]);
    const [cluster] = unit.rows.clusters;
    expect(cluster).toMatchObject({
      id: CLUSTER.id,
      name: CLUSTER.name,
      profile_id: CLUSTER.profile_id,
      project: CLUSTER.project,
      user: CLUSTER.user,
      domain: CLUSTER.domain,
      min_size: CLUSTER.min_size,
      max_size: CLUSTER.max_size,
      desired_capacity: CLUSTER.desired_capacity,
      next_index: CLUSTER.next_index,
      status: 'ACTIVE',
      metadata: JSON.parse(CLUSTER.meta_data!),
    });
    expect(cluster.created_at).toEqual(new Date(`${CLUSTER.created_at!.replace(' ', 'T')}Z`));
    expect(cluster.init_at).toEqual(senlinTime(CLUSTER.init_at));

    const senlinNodes = r.nodes.filter((n) => n.cluster_id === CLUSTER.id);
    expect(unit.rows.nodes).toHaveLength(senlinNodes.length);
    for (const n of senlinNodes) {
      const node = unit.rows.nodes.find((x) => x.id === n.id)!;
      const server = seen.get(n.physical_id!) as Extract<ServerSeen, { state: 'found' }>;
      expect(node).toMatchObject({ name: n.name, physical_id: n.physical_id, index: n.index, project: n.project, user: n.user, status: 'ACTIVE', cluster_id: CLUSTER.id });
      expect(node.created_at).toEqual(senlinTime(n.created_at));
      // Senlin's placement data stays (the server group), Nova's zone and host are recorded
      const senlinPlacement = JSON.parse(n.data!).placement ?? {};
      expect(node.data.placement).toEqual({ ...senlinPlacement, zone: server.zone, host: server.host });
      expect(node.action_id).toBeNull();
    }
  });

  it("carries the bindings over with their data: the affinity policy's server group", () => {
    const r = rows();
    const unit = clusterUnit(planImport(r, ALL, NOTHING, novaSees(r)));
    expect(unit.rows.bindings.map((b) => b.id).sort()).toEqual(r.bindings.map((b) => b.id).sort());
    const affinity = r.policies.find((p) => p.type === 'senlin.policy.affinity-1.0')!;
    const binding = unit.rows.bindings.find((b) => b.policy_id === affinity.id)!;
    const senlinData = JSON.parse(r.bindings.find((b) => b.policy_id === affinity.id)!.data!);
    expect(binding.data).toEqual(senlinData);
    expect(binding.data.AffinityPolicy.data.servergroup_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(binding.data.AffinityPolicy.data.inherited_group).toBe(false);
    for (const b of unit.rows.bindings) {
      const senlin = r.bindings.find((x) => x.id === b.id)!;
      expect({ priority: b.priority, enabled: b.enabled }).toEqual({ priority: senlin.priority, enabled: senlin.enabled === 1 });
      // no attach time in Senlin: the later of the cluster's and the policy's creation
      const policy = r.policies.find((p) => p.id === b.policy_id)!;
      const bound = [senlinTime(CLUSTER.created_at)!, senlinTime(policy.created_at)!].sort((x, y) => y.getTime() - x.getTime())[0];
      expect(b.attached_at).toEqual(bound);
    }
    expect(unit.rows.policies.map((p) => p.type).sort()).toEqual(['senlin.policy.affinity-1.0', 'senlin.policy.deletion-1.1', 'senlin.policy.zone_placement-1.0']);
    expect(unit.rows.profiles.map((p) => p.type)).toEqual(['os.nova.server-1.0']);
  });

  it("keeps the receiver's id and webhook URL, drops Senlin's trust and says the owner needs one in Trellis", () => {
    const r = rows();
    const [senlin] = r.receivers;
    const unit = clusterUnit(planImport(r, ALL, NOTHING, novaSees(r)));
    expect(unit.rows.receivers).toEqual([
      expect.objectContaining({ id: senlin.id, name: senlin.name, type: 'webhook', action: senlin.action, actor: {}, channel: JSON.parse(senlin.channel!), params: JSON.parse(senlin.params!) }),
    ]);
    expect(JSON.parse(senlin.actor!).trust_id).toBeTruthy();
    expect(unit.notes.join('\n')).toMatch(/webhook answers 403 until its owner/);
    const withTrust = planImport(r, ALL, { ...NOTHING, trusts: new Set([`${senlin.user}/${senlin.project}`]) }, novaSees(r));
    expect(clusterUnit(withTrust).notes.join('\n')).not.toMatch(/403/);
  });

  it('imports nothing the second time: every object is already in Trellis', () => {
    const r = rows();
    const present: ExistingIds = {
      profiles: new Set(r.profiles.map((p) => p.id)),
      policies: new Set(r.policies.map((p) => p.id)),
      clusters: new Set(r.clusters.map((c) => c.id)),
      nodes: new Set(r.nodes.map((n) => n.id)),
      receivers: new Set(r.receivers.map((x) => x.id)),
      trusts: new Set(),
    };
    const plan = planImport(r, ALL, present, novaSees(r));
    expect(plan.units.map((u) => u.state)).toEqual(plan.units.map(() => 'present'));
    expect(plan.units.flatMap((u) => Object.values(u.rows).flat())).toEqual([]);
  });

  it('reports a node whose server is gone and imports it as ERROR; a server Nova would not show blocks the cluster', () => {
    const r = rows();
    const [first, second] = r.nodes;
    const plan = planImport(r, ALL, NOTHING, novaSees(r, { [first.physical_id!]: { state: 'gone' } }));
    const node = clusterUnit(plan).rows.nodes.find((n) => n.id === first.id)!;
    expect(node).toMatchObject({ status: 'ERROR', status_reason: `Imported from Senlin: its server ${first.physical_id} was not found in Nova.` });
    expect(clusterUnit(plan).notes).toContain(`node ${first.name} (${first.id}): its server ${first.physical_id} is gone from Nova; imported as ERROR`);
    expect(clusterUnit(plan).state).toBe('new');

    const unreadable = planImport(r, ALL, NOTHING, novaSees(r, { [second.physical_id!]: { state: 'unreadable', error: 'Nova answered 503' } }));
    expect(clusterUnit(unreadable).state).toBe('blocked');
    expect(clusterUnit(unreadable).blockers).toEqual([`node ${second.name} (${second.id}): its server ${second.physical_id} could not be read from Nova (Nova answered 503)`]);
  });

  describe('actions Senlin had not finished', () => {
    const running = (r: SenlinRows, status = 'RUNNING') => {
      r.actions.push({ id: 'a0000000-0000-4000-8000-000000000001', name: 'cluster_scale_out_1', cluster_id: CLUSTER.id, target: CLUSTER.id, action: 'CLUSTER_SCALE_OUT', status, owner: null, created_at: r.now });
      return r;
    };

    it.each(['READY', 'RUNNING', 'WAITING'])('a %s action keeps the cluster out unless --force', (status) => {
      const r = engineStopped(running(rows(), status));
      const unit = clusterUnit(planImport(r, ALL, NOTHING, novaSees(r)));
      expect(unit.state).toBe('blocked');
      expect(unit.unfinished_actions).toEqual([expect.objectContaining({ action: 'CLUSTER_SCALE_OUT', status })]);
      expect(unit.blockers[0]).toMatch(/Senlin had not finished CLUSTER_SCALE_OUT a0000000-0000-4000-8000-000000000001 \(\w+\); stop Senlin's engine, then import this cluster with --force/);
    });

    it("--force imports the cluster without the action, but only once Senlin's engine is not running", () => {
      const alive = running(rows());
      alive.services = [{ id: 'e1', host: 'os-controller', binary: 'senlin-engine', topic: 'senlin-engine', disabled: 0, created_at: alive.now, updated_at: alive.now }];
      const refused = clusterUnit(planImport(alive, { ...ALL, force: true }, NOTHING, novaSees(alive)));
      expect(refused.state).toBe('blocked');
      expect(refused.blockers[0]).toMatch(/a senlin-engine is still running \(Senlin's service table\): stop it before --force/);

      const stopped = engineStopped(running(rows()));
      const unit = clusterUnit(planImport(stopped, { ...ALL, force: true }, NOTHING, novaSees(stopped)));
      expect(unit.state).toBe('new');
      expect(unit.notes.join('\n')).toMatch(/unfinished CLUSTER_SCALE_OUT .* is not imported \(--force\)/);
    });

    it('finished actions do not count', () => {
      const r = engineStopped(running(rows(), 'SUCCEEDED'));
      expect(clusterUnit(planImport(r, ALL, NOTHING, novaSees(r))).state).toBe('new');
    });
  });

  it("leaves out a binding of a policy type Trellis does not ship, and blocks on a placement policy Trellis refuses", () => {
    const r = rows();
    r.policies.push({ ...r.policies[0], id: 'b0000000-0000-4000-8000-000000000001', name: 'health', type: 'senlin.policy.health-1.1', spec: JSON.stringify({ type: 'senlin.policy.health', version: '1.1', properties: {} }) });
    r.bindings.push({ id: 'c0000000-0000-4000-8000-000000000001', cluster_id: CLUSTER.id, policy_id: 'b0000000-0000-4000-8000-000000000001', enabled: 1, priority: 600, data: null, last_op: null });
    const plan = planImport(r, ALL, NOTHING, novaSees(r));
    expect(clusterUnit(plan).state).toBe('new');
    expect(plan.left_out).toContainEqual(expect.objectContaining({ kind: 'binding', id: 'c0000000-0000-4000-8000-000000000001', reason: expect.stringContaining('Trellis has no policy of this type') }));

    const zones = r.policies.find((p) => p.type === 'senlin.policy.zone_placement-1.0')!;
    zones.spec = JSON.stringify({ type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 0 }] } });
    const refused = clusterUnit(planImport(r, ALL, NOTHING, novaSees(r)));
    expect(refused.state).toBe('blocked');
    expect(refused.blockers.join('\n')).toMatch(new RegExp(`policy ${zones.name} \\(${zones.id}\\): Trellis refuses its spec: .*weight`));
  });

  it('blocks a cluster of a profile type Trellis does not build, and names the column it cannot read', () => {
    const r = rows();
    r.profiles[0].spec = JSON.stringify({ type: 'os.heat.stack', version: '1.0', properties: { template: { heat_template_version: '2016-04-08' } } });
    const heat = clusterUnit(planImport(r, ALL, NOTHING, novaSees(r)));
    expect(heat.state).toBe('blocked');
    expect(heat.blockers.join()).toMatch(/its type os\.heat\.stack-1\.0 is one Trellis keeps but does not build nodes of/);

    const bad = rows();
    bad.nodes[0].data = '{"placement": ';
    const unit = clusterUnit(planImport(bad, ALL, NOTHING, novaSees(bad)));
    expect(unit.state).toBe('blocked');
    expect(unit.blockers.join()).toMatch(new RegExp(`node .*${bad.nodes[0].id}\\) cannot be read: its data column is not JSON`));
  });

  it('leaves out message receivers, and selects by project and by cluster id or name', () => {
    const r = rows();
    r.receivers.push({ ...r.receivers[0], id: 'd0000000-0000-4000-8000-000000000001', name: 'queue', type: 'message', cluster_id: null });
    const plan = planImport(r, ALL, NOTHING, novaSees(r));
    expect(plan.left_out).toContainEqual(expect.objectContaining({ kind: 'receiver', id: 'd0000000-0000-4000-8000-000000000001', reason: expect.stringMatching(/message receiver/) }));

    expect(planImport(r, { ...ALL, projects: ['someone-else'] }, NOTHING, novaSees(r)).units.filter((u) => u.kind === 'cluster')).toEqual([]);
    expect(clusterUnit(planImport(r, { ...ALL, clusters: [CLUSTER.name!] }, NOTHING, novaSees(r))).state).toBe('new');
    const unknown = planImport(r, { ...ALL, clusters: ['no-such-cluster'] }, NOTHING, novaSees(r));
    expect(unknown.units).toEqual([]);
    expect(unknown.left_out).toEqual([expect.objectContaining({ kind: 'cluster', id: 'no-such-cluster', reason: 'no cluster of Senlin has this id or name' })]);
    expect(serversToRead(r, { ...ALL, projects: ['someone-else'] })).toEqual([]);
    expect(serversToRead(r, ALL).sort()).toEqual(r.nodes.map((n) => n.physical_id).sort());
  });

  it("reads Senlin's service table as Senlin does: silent for more than 132 s is dead", () => {
    const now = '2026-11-26 17:00:00';
    const row = (updated: string | null, disabled = 0) => ({ id: 'x', host: 'h', binary: 'senlin-engine', topic: 't', disabled, created_at: '2026-11-26 16:00:00', updated_at: updated });
    expect(senlinServiceStates([row('2026-11-26 16:58:00')], now)[0]).toMatchObject({ alive: true, silent_for_s: 120 });
    expect(senlinServiceStates([row('2026-11-26 16:57:47')], now)[0]).toMatchObject({ alive: false, silent_for_s: 133 });
    expect(senlinServiceStates([row('2026-11-26 16:59:59', 1)], now)[0].alive).toBe(false);
    expect(senlinServiceStates([row(null)], now)[0]).toMatchObject({ alive: false, silent_for_s: 3600 });
  });
});
