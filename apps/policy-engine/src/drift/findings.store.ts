import { randomUUID } from 'node:crypto';
import { fingerprintOf, type Finding } from '@trellis/decisions';
import { ActionEntity, ClusterEntity, ClusterFindingEntity, EventEntity, row } from '@trellis/persistence';
import { In, type EntityManager } from 'typeorm';

const LEVEL = { INFO: 20, WARNING: 30 } as const;

export interface RecordedFindings {
  /** every finding still open after this detection, new or seen before */
  open: ClusterFindingEntity[];
  opened: number;
  resolved: number;
}

/**
 * Stores one detection's findings with the cluster, in the caller's transaction: a finding seen
 * before keeps its row (and first-seen time), a new one is OPENed, an open one no longer seen is
 * RESOLVED. Each change is an event; `clusters.data.drift` sums up what is open.
 */
export async function recordFindings(m: EntityManager, action: ActionEntity, findings: readonly Finding[], now: Date): Promise<RecordedFindings> {
  const clusterId = action.cluster_id!;
  const repo = m.getRepository(ClusterFindingEntity);
  const previous = await repo.findBy({ cluster_id: clusterId, status: 'OPEN' });
  const byPrint = new Map(previous.map((f) => [f.fingerprint, f]));
  const cluster = await m.getRepository(ClusterEntity).findOneBy({ id: clusterId });
  const open: ClusterFindingEntity[] = [];
  const events: Array<{ f: ClusterFindingEntity; level: number; status: string; reason: string }> = [];
  const seen = new Set<string>();
  for (const f of findings) {
    const print = fingerprintOf(f);
    if (seen.has(print)) continue;
    seen.add(print);
    const known = byPrint.get(print);
    if (known) {
      known.last_seen_at = now;
      known.message = f.message;
      await repo.update({ id: known.id }, { last_seen_at: now, message: f.message });
      open.push(known);
      continue;
    }
    const entity = repo.create({
      id: randomUUID(),
      cluster_id: clusterId,
      project: cluster?.project ?? action.project,
      kind: f.kind,
      fingerprint: print,
      policy_id: f.policy_id,
      group_id: f.group_id ?? null,
      host: f.host ?? null,
      zone: null,
      node_ids: f.node_ids,
      message: f.message,
      detail: { ...(f.detail ?? {}), policy_name: f.policy_name, ...(f.group_name ? { group_name: f.group_name } : {}) },
      status: 'OPEN',
      found_by: action.id,
      resolved_by: null,
      found_at: now,
      last_seen_at: now,
      resolved_at: null,
    });
    await repo.insert(row<ClusterFindingEntity>(entity));
    open.push(entity);
    events.push({ f: entity, level: LEVEL.WARNING, status: 'DRIFT', reason: f.message });
  }
  const gone = previous.filter((f) => !seen.has(f.fingerprint));
  if (gone.length) {
    await repo.update({ id: In(gone.map((f) => f.id)) }, { status: 'RESOLVED', resolved_by: action.id, resolved_at: now });
    for (const f of gone) events.push({ f, level: LEVEL.INFO, status: 'DRIFT_RESOLVED', reason: `Resolved: ${f.message}` });
  }
  await insertEvents(m, action, cluster, events, now);
  if (cluster) await summarise(m, cluster, open, action, now);
  return { open, opened: events.length - gone.length, resolved: gone.length };
}

/**
 * Marks the open findings a repair answered RESOLVED without looking again (a scaling action that
 * repaired a vanished group goes on to grow; the next check looks again).
 */
export async function resolveFindings(m: EntityManager, action: ActionEntity, findings: readonly Finding[], now: Date): Promise<number> {
  const prints = findings.map(fingerprintOf);
  if (!prints.length) return 0;
  const repo = m.getRepository(ClusterFindingEntity);
  const rows = await repo.findBy({ cluster_id: action.cluster_id!, status: 'OPEN', fingerprint: In(prints) });
  if (!rows.length) return 0;
  await repo.update({ id: In(rows.map((f) => f.id)) }, { status: 'RESOLVED', resolved_by: action.id, resolved_at: now });
  const cluster = await m.getRepository(ClusterEntity).findOneBy({ id: action.cluster_id! });
  await insertEvents(
    m,
    action,
    cluster,
    rows.map((f) => ({ f, level: LEVEL.INFO, status: 'DRIFT_RESOLVED', reason: `Repaired: ${f.message}` })),
    now,
  );
  if (cluster) await summarise(m, cluster, await repo.findBy({ cluster_id: cluster.id, status: 'OPEN' }), action, now);
  return rows.length;
}

async function insertEvents(
  m: EntityManager,
  action: ActionEntity,
  cluster: ClusterEntity | null,
  events: Array<{ f: ClusterFindingEntity; level: number; status: string; reason: string }>,
  now: Date,
): Promise<void> {
  if (!events.length) return;
  await m.getRepository(EventEntity).insert(
    events.map(({ f, level, status, reason }) =>
      row<EventEntity>({
        id: randomUUID(),
        timestamp: now,
        oid: f.cluster_id,
        oname: cluster?.name ?? null,
        otype: 'CLUSTER',
        cluster_id: f.cluster_id,
        level,
        user: action.user,
        project: action.project,
        action: action.action,
        status,
        status_reason: reason,
        meta_data: { action_id: action.id, finding_id: f.id, kind: f.kind, node_ids: f.node_ids, group_id: f.group_id, host: f.host },
      }),
    ),
  );
}

async function summarise(m: EntityManager, cluster: ClusterEntity, open: readonly ClusterFindingEntity[], action: ActionEntity, now: Date) {
  const kinds: Record<string, number> = {};
  for (const f of open) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  const data = { ...(cluster.data ?? {}), drift: { checked_at: now.toISOString(), checked_by: action.id, open: open.length, kinds } };
  await m.getRepository(ClusterEntity).update({ id: cluster.id }, row<ClusterEntity>({ data }));
}
