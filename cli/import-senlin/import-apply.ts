import {
  ClusterEntity,
  ClusterPolicyEntity,
  NodeEntity,
  PolicyEntity,
  ProfileEntity,
  ReceiverEntity,
  TrustEntity,
  inTransaction,
} from '@trellis/persistence';
import { In, type DataSource, type EntityManager, type EntityTarget, type ObjectLiteral } from 'typeorm';
import type { ExistingIds, ImportUnit } from './import-plan';
import type { SenlinRows } from './senlin-rows';

/** The ids of Senlin's objects that Trellis already has (an earlier import, or a clash), and who has a trust. */
export async function existingIds(dataSource: DataSource, rows: SenlinRows): Promise<ExistingIds> {
  const m = dataSource.manager;
  const ids = async <T extends ObjectLiteral>(entity: EntityTarget<T>, wanted: string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    // in slices, so that a large Senlin does not make one statement with tens of thousands of parameters
    for (let i = 0; i < wanted.length; i += 1000) {
      const slice = wanted.slice(i, i + 1000);
      const hit = (await m.getRepository(entity).find({ select: { id: true } as never, where: { id: In(slice) } as never })) as unknown as Array<{ id: string }>;
      for (const r of hit) found.add(r.id);
    }
    return found;
  };
  const trusts = await m.getRepository(TrustEntity).find({ select: { user_id: true, project_id: true } });
  return {
    profiles: await ids(ProfileEntity, rows.profiles.map((r) => r.id)),
    policies: await ids(PolicyEntity, rows.policies.map((r) => r.id)),
    clusters: await ids(ClusterEntity, rows.clusters.map((r) => r.id)),
    nodes: await ids(NodeEntity, rows.nodes.map((r) => r.id)),
    receivers: await ids(ReceiverEntity, rows.receivers.map((r) => r.id)),
    trusts: new Set(trusts.map((t) => `${t.user_id}/${t.project_id}`)),
  };
}

export interface UnitResult {
  unit: string;
  outcome: 'imported' | 'already-present' | 'failed';
  inserted: Record<'profiles' | 'policies' | 'clusters' | 'nodes' | 'bindings' | 'receivers', number>;
  error?: string;
}

/**
 * Writes one unit in one transaction. Every insert is `ON CONFLICT DO NOTHING`: a profile shared
 * by two clusters is written by the first, and a unit another run wrote meanwhile adds nothing. A
 * cluster row is written only if it did not exist when the transaction inserted it; if it did,
 * the whole unit is rolled back (Trellis's cluster is never merged with Senlin's state).
 */
export async function applyUnit(dataSource: DataSource, unit: ImportUnit): Promise<UnitResult> {
  const label = `${unit.kind} ${unit.name ?? unit.id} (${unit.id})`;
  const inserted = { profiles: 0, policies: 0, clusters: 0, nodes: 0, bindings: 0, receivers: 0 };
  try {
    await inTransaction(dataSource, async (m) => {
      Object.assign(inserted, { profiles: 0, policies: 0, clusters: 0, nodes: 0, bindings: 0, receivers: 0 });
      inserted.profiles = await insertIgnoring(m, ProfileEntity, unit.rows.profiles);
      inserted.policies = await insertIgnoring(m, PolicyEntity, unit.rows.policies);
      inserted.clusters = await insertIgnoring(m, ClusterEntity, unit.rows.clusters);
      if (inserted.clusters < unit.rows.clusters.length) throw new AlreadyPresent();
      inserted.nodes = await insertIgnoring(m, NodeEntity, unit.rows.nodes);
      if (inserted.nodes < unit.rows.nodes.length) {
        if (unit.kind === 'node') throw new AlreadyPresent();
        throw new Error(`${unit.rows.nodes.length - inserted.nodes} of its nodes appeared in Trellis during the import`);
      }
      inserted.bindings = await insertIgnoring(m, ClusterPolicyEntity, unit.rows.bindings);
      inserted.receivers = await insertIgnoring(m, ReceiverEntity, unit.rows.receivers);
    });
  } catch (e) {
    if (e instanceof AlreadyPresent) return { unit: label, outcome: 'already-present', inserted: { ...inserted, clusters: 0, nodes: 0 } };
    return { unit: label, outcome: 'failed', inserted: { profiles: 0, policies: 0, clusters: 0, nodes: 0, bindings: 0, receivers: 0 }, error: (e as Error).message };
  }
  const total = Object.values(inserted).reduce((a, b) => a + b, 0);
  return { unit: label, outcome: total ? 'imported' : 'already-present', inserted };
}

class AlreadyPresent extends Error {}

async function insertIgnoring<T extends ObjectLiteral>(m: EntityManager, entity: EntityTarget<T>, rows: T[]): Promise<number> {
  let count = 0;
  for (let i = 0; i < rows.length; i += 200) {
    const result = await m
      .createQueryBuilder()
      .insert()
      .into(entity)
      .values(rows.slice(i, i + 200) as never)
      .orIgnore()
      .returning('id')
      .execute();
    count += (result.raw as unknown[]).length;
  }
  return count;
}
