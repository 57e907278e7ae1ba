import { randomUUID } from 'node:crypto';
import type { ServerGroupCreateDto, WorkResultMessage } from '@trellis/contracts';
import { ActionEntity, ActionStepEntity, ClusterEntity, ClusterPolicyEntity, EventEntity, NodeEntity, ProfileEntity, row } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';
import { resolveRefs } from '../results/finish-action';
import { type DriftState, stepsOf } from './repair-state';
import { emitStep } from './step-orders';
import type { WorkOrderVersionSource } from '../actions/work-order-versions';

export interface RepairRunnerOptions {
  buildTimeoutSeconds: number;
  /** the schema_version the nova-workers that are up take (default: this release's) */
  workOrderVersions?: WorkOrderVersionSource;
}

export type StepOutcome = 'continue' | { failed: string };

/**
 * Carries out a repair plan one step at a time (issue 6): a replacement is created in its group and
 * zone, and only once it is ACTIVE is the node it replaces deleted, so the cluster never has fewer
 * ACTIVE nodes than when the repair began (nor than min_size). Each step is its own work order.
 */
export class RepairRunner {
  constructor(private readonly options: RepairRunnerOptions) {}

  /** Sends the next step; 'done' when every step has run. Skips nodes that left the cluster meanwhile. */
  async next(m: EntityManager, action: ActionEntity, state: DriftState, correlationId: string, now: Date): Promise<'sent' | 'done' | { failed: string }> {
    const plan = state.repair!;
    const steps = stepsOf(plan);
    const nodes = m.getRepository(NodeEntity);
    const send = { correlationId, buildTimeoutSeconds: this.options.buildTimeoutSeconds, now, version: this.options.workOrderVersions?.current };
    state.next ??= 0;
    while (state.next < steps.length) {
      const step = steps[state.next];
      const seq = await nextSeq(m, action.id);
      if (step.kind === 'groups') {
        await emitStep(m, action, { kind: 'groups', seq }, { ...empty(), kind: 'cloud', create_groups: pendingGroups(state) }, send);
        action.status_reason = `Repairing: creating ${plan.groups.map((g) => `'${g.name}'`).join(', ')} again.`;
        return 'sent';
      }
      const r = plan.replacements[step.replacement];
      const old = await nodes.findOneBy({ id: r.old_node_id });
      const label = `${step.replacement + 1} of ${plan.replacements.length}`;
      if (step.kind === 'create') {
        if (!old || old.cluster_id !== action.cluster_id) {
          // the node left the cluster since the plan was made: nothing to replace
          state.next += 2;
          continue;
        }
        const index = await this.takeIndex(m, action.cluster_id!);
        const profile = await m.getRepository(ProfileEntity).findOneByOrFail({ id: old.profile_id });
        await nodes.insert(
          row<NodeEntity>({
            id: r.node_id,
            name: r.name,
            cluster_id: action.cluster_id,
            profile_id: old.profile_id,
            project: old.project,
            user: action.user,
            domain: action.domain,
            physical_id: null,
            index,
            role: old.role,
            status: 'INIT',
            status_reason: `Replacing node ${old.name}`,
            data: { placement: r.placement },
            metadata: old.metadata ?? {},
            tainted: false,
            init_at: now,
            created_at: null,
            updated_at: now,
            action_id: null,
          }),
        );
        const stepRow = await emitStep(
          m,
          action,
          { kind: 'create', seq, detail: { replacement: step.replacement } },
          {
            ...empty(),
            kind: 'create',
            create_groups: pendingGroups(state),
            create_servers: [{ node_id: r.node_id, name: r.name, index, placement: r.placement }],
            profile: (profile.spec.properties as Record<string, unknown>) ?? {},
          },
          send,
        );
        await nodes.update({ id: r.node_id }, { action_id: stepRow.id });
        action.status_reason = `Repairing: replacement ${label}, creating ${r.name} for ${r.old_name}.`;
        return 'sent';
      }
      if (!old || old.cluster_id !== action.cluster_id) {
        state.next += 1;
        continue;
      }
      const cluster = await m.getRepository(ClusterEntity).findOneByOrFail({ id: action.cluster_id! });
      const active = await nodes.countBy({ cluster_id: cluster.id, status: 'ACTIVE' });
      const floor = Math.min(cluster.min_size, state.active_at_start ?? cluster.min_size);
      if (old.status === 'ACTIVE' && active - 1 < floor) {
        return {
          failed:
            `Deleting node ${old.name} would leave ${active - 1} ACTIVE node(s), fewer than ${floor} ` +
            `(min_size ${cluster.min_size}); the repair stops with ${old.name} kept.`,
        };
      }
      const stepRow = await emitStep(
        m,
        action,
        { kind: 'delete', seq, detail: { replacement: step.replacement } },
        { ...empty(), kind: 'delete', delete_servers: [{ node_id: old.id, physical_id: old.physical_id, destroy: true }] },
        send,
      );
      await nodes.update({ id: old.id }, { action_id: stepRow.id, status_reason: `Replaced by node ${r.name}`, updated_at: now });
      action.status_reason = `Repairing: replacement ${label}, deleting ${r.old_name} (replaced by ${r.name}).`;
      return 'sent';
    }
    return 'done';
  }

  /** What a step's work result means for the repair. */
  async onResult(m: EntityManager, action: ActionEntity, step: ActionStepEntity, state: DriftState, result: WorkResultMessage, now: Date): Promise<StepOutcome> {
    const plan = state.repair!;
    if (Object.keys(result.groups ?? {}).length) await this.groupsCreated(m, action, state, result.groups);
    if (step.kind === 'groups') {
      if (result.outcome !== 'SUCCEEDED') return { failed: `Creating the server group(s) again failed: ${result.reason}` };
      state.next = (state.next ?? 0) + 1;
      return 'continue';
    }
    const r = plan.replacements[step.detail.replacement as number];
    if (step.kind === 'create') {
      const outcome = result.nodes.find((n) => n.node_id === r.node_id);
      if (result.outcome !== 'SUCCEEDED' || outcome?.status !== 'ACTIVE') {
        return {
          failed:
            `The replacement ${r.name} of node ${r.old_name} did not become ACTIVE: ${outcome?.reason ?? result.reason} ` +
            `Node ${r.old_name} is kept; the repair stops here.`,
        };
      }
      state.next = (state.next ?? 0) + 1;
      return 'continue';
    }
    const outcome = result.nodes.find((n) => n.node_id === r.old_node_id);
    if (result.outcome !== 'SUCCEEDED' || outcome?.status === 'ERROR') {
      return { failed: `Deleting node ${r.old_name}, replaced by ${r.name}, failed: ${outcome?.reason ?? result.reason}` };
    }
    const fresh = await m.getRepository(NodeEntity).findOneBy({ id: r.node_id });
    const placement = (fresh?.data?.placement ?? {}) as Record<string, unknown>;
    const replaced = {
      old_node_id: r.old_node_id,
      old_name: r.old_name,
      node_id: r.node_id,
      name: r.name,
      host: typeof placement.host === 'string' ? placement.host : null,
      zone: typeof placement.zone === 'string' ? placement.zone : null,
    };
    (state.replaced ??= []).push(replaced);
    await m.getRepository(EventEntity).insert(
      row<EventEntity>({
        id: randomUUID(),
        timestamp: now,
        oid: r.node_id,
        oname: r.name,
        otype: 'NODE',
        cluster_id: action.cluster_id,
        level: 20,
        user: action.user,
        project: action.project,
        action: action.action,
        status: 'REPLACED',
        status_reason:
          `Node ${r.old_name} replaced by ${r.name} (${r.reasons.join(', ')})` +
          `${replaced.host ? ` on host ${replaced.host}` : ''}${replaced.zone ? ` in zone ${replaced.zone}` : ''}` +
          `${placement.servergroup ? `, server group ${String(placement.servergroup)}` : ''}.`,
        meta_data: { action_id: action.id, step_id: step.id, replaced: r.old_node_id, reasons: r.reasons },
      }),
    );
    state.next = (state.next ?? 0) + 1;
    return 'continue';
  }

  /**
   * Nova gave the new groups their ids: the bindings point at them from now on, and nodes still
   * recorded in a vanished group count as outside its successor (Nova never adds an existing server
   * to a group), so a repair cut short leaves findings a later repair picks up.
   */
  private async groupsCreated(m: EntityManager, action: ActionEntity, state: DriftState, groups: Record<string, string>): Promise<void> {
    const plan = state.repair!;
    for (const g of plan.groups) {
      const id = groups[g.ref];
      if (!id) continue;
      await m.query(
        `UPDATE nodes SET data = jsonb_set(data, '{placement,servergroup}', to_jsonb($1::text))
          WHERE cluster_id = $2 AND data->'placement'->>'servergroup' = $3`,
        [id, action.cluster_id, g.replaces],
      );
    }
    for (const u of plan.binding_updates) {
      await m.getRepository(ClusterPolicyEntity).update({ id: u.binding_id }, row<ClusterPolicyEntity>({ data: resolveRefs(u.data, groups) }));
    }
    state.repair = resolveRefs(plan, groups);
  }

  private async takeIndex(m: EntityManager, clusterId: string): Promise<number> {
    const cluster = await m
      .getRepository(ClusterEntity)
      .createQueryBuilder('c')
      .setLock('pessimistic_write')
      .where('c.id = :id', { id: clusterId })
      .getOneOrFail();
    await m.getRepository(ClusterEntity).update({ id: clusterId }, { next_index: cluster.next_index + 1 });
    return cluster.next_index;
  }
}

/** Groups of the plan Nova has not given an id yet (their ref is still a reference). */
function pendingGroups(state: DriftState): ServerGroupCreateDto[] {
  return state.repair!.groups.filter((g) => g.ref.startsWith('ref:')).map((g) => ({ ref: g.ref, name: g.name, policy: g.policy, rules: {} }));
}

const empty = () => ({ create_groups: [], create_servers: [], delete_servers: [], delete_groups: [] });

export async function nextSeq(m: EntityManager, actionId: string): Promise<number> {
  const rows: Array<{ seq: number | null }> = await m.query(`SELECT MAX(seq) AS seq FROM action_steps WHERE action_id = $1`, [actionId]);
  return Number(rows[0]?.seq ?? 0) + 1;
}
