import { randomUUID } from 'node:crypto';
import { Exchanges, RoutingKeys, WORK_ORDER_SCHEMA_VERSION, type WorkOrderMessage } from '@trellis/contracts';
import { ActionEntity, ActionStepEntity, addToOutbox, row } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';

export type StepKind = 'survey' | 'groups' | 'create' | 'delete' | 'cleanup';

export type OrderBody = Pick<WorkOrderMessage, 'kind' | 'create_groups' | 'create_servers' | 'delete_servers' | 'delete_groups' | 'profile'>;

/**
 * Writes one step of an action: its `action_steps` row and its work order, whose `action_id` is the
 * step's id (the nova-worker keeps one order per id). The order is kept with the step so a resumed
 * action can send it again.
 */
export async function emitStep(
  m: EntityManager,
  action: ActionEntity,
  step: { kind: StepKind; seq: number; detail?: Record<string, unknown> },
  body: OrderBody,
  options: { correlationId: string; buildTimeoutSeconds: number; now: Date },
): Promise<ActionStepEntity> {
  const id = randomUUID();
  const order: WorkOrderMessage = {
    message_id: randomUUID(),
    schema_version: WORK_ORDER_SCHEMA_VERSION,
    action_id: id,
    correlation_id: options.correlationId,
    sent_at: options.now.toISOString(),
    cluster_id: action.cluster_id,
    project: action.project,
    user: action.user,
    action: action.action,
    build_timeout: options.buildTimeoutSeconds,
    ...body,
  };
  const entity: ActionStepEntity = {
    id,
    action_id: action.id,
    seq: step.seq,
    kind: step.kind,
    status: 'RUNNING',
    detail: { ...(step.detail ?? {}), order },
    created_at: options.now,
    finished_at: null,
  };
  await m.getRepository(ActionStepEntity).insert(row<ActionStepEntity>(entity));
  await publishOrder(m, order);
  return entity;
}

/** The step's order once more, with a new message id (the worker recognises the order itself). */
export async function resendStep(m: EntityManager, step: ActionStepEntity, now: Date): Promise<void> {
  const order = step.detail.order as WorkOrderMessage;
  await publishOrder(m, { ...order, message_id: randomUUID(), sent_at: now.toISOString() });
}

async function publishOrder(m: EntityManager, order: WorkOrderMessage): Promise<void> {
  await addToOutbox(m, {
    exchange: Exchanges.work,
    routingKey: RoutingKeys.workOrder,
    type: RoutingKeys.workOrder,
    messageId: order.message_id,
    correlationId: order.correlation_id,
    body: order,
  });
}

/** The order of a survey: nothing to change, look at the cloud again. */
export const SURVEY_ORDER: OrderBody = { kind: 'cloud', create_groups: [], create_servers: [], delete_servers: [], delete_groups: [] };
