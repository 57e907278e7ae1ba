import { randomUUID } from 'node:crypto';
import { Exchanges, RoutingKeys, WORK_ORDER_SCHEMA_VERSION, workOrderAs, type WorkOrderMessage } from '@trellis/contracts';
import { ActionEntity, ActionStepEntity, addToOutbox, row } from '@trellis/persistence';
import type { EntityManager } from 'typeorm';

export type StepKind = 'survey' | 'groups' | 'create' | 'delete' | 'cleanup';

export type OrderBody = Pick<WorkOrderMessage, 'kind' | 'create_groups' | 'create_servers' | 'delete_servers' | 'delete_groups' | 'profile'>;

/** How a step's order is sent: `version` is the schema_version the workers up take (default: this release's). */
export interface StepSend {
  correlationId: string;
  buildTimeoutSeconds: number;
  now: Date;
  version?: number;
}

/**
 * Writes one step of an action: its `action_steps` row and its work order, whose `action_id` is the
 * step's id (the nova-worker keeps one order per id). The order is kept with the step (in this
 * release's form) so a resumed action can send it again, in the form the workers then take.
 */
export async function emitStep(
  m: EntityManager,
  action: ActionEntity,
  step: { kind: StepKind; seq: number; detail?: Record<string, unknown> },
  body: OrderBody,
  options: StepSend,
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
  await publishOrder(m, order, options.version);
  return entity;
}

/** The step's order once more, with a new message id (the worker recognises the order itself). */
export async function resendStep(m: EntityManager, step: ActionStepEntity, now: Date, version?: number): Promise<void> {
  const order = step.detail.order as WorkOrderMessage;
  await publishOrder(m, { ...order, message_id: randomUUID(), sent_at: now.toISOString() }, version);
}

async function publishOrder(m: EntityManager, order: WorkOrderMessage, version = WORK_ORDER_SCHEMA_VERSION): Promise<void> {
  await addToOutbox(m, {
    exchange: Exchanges.work,
    routingKey: RoutingKeys.workOrder,
    type: RoutingKeys.workOrder,
    messageId: order.message_id,
    correlationId: order.correlation_id,
    body: workOrderAs(order, version),
  });
}

/** The order of a survey: nothing to change, look at the cloud again. */
export const SURVEY_ORDER: OrderBody = { kind: 'cloud', create_groups: [], create_servers: [], delete_servers: [], delete_groups: [] };
