/**
 * Every exchange, queue and routing key Trellis uses, in one place.
 *
 * Work that must not be lost travels on durable exchanges into quorum queues; each consumer queue
 * has its own dead-letter queue (`<queue>.dlq`) reached through the `trellis.dlx` exchange with the
 * queue name as routing key. Action-finished notifications go to a topic exchange that callers may
 * bind their own queues to (routing key `action.finished.<cluster_id>.<action_id>`).
 */
export const Exchanges = {
  actions: 'trellis.actions',
  work: 'trellis.work',
  results: 'trellis.results',
  events: 'trellis.events',
  rpc: 'trellis.rpc',
  deadLetter: 'trellis.dlx',
} as const;

/**
 * Exchanges whose messages are notifications for whoever listens: publishing there with no queue
 * bound is not an error (work exchanges, by contrast, must route every message to a queue).
 */
export const NotificationExchanges: readonly string[] = [Exchanges.events];

export const Queues = {
  /** policy-engine: new and replayed actions */
  engineActions: 'trellis.policy-engine.actions',
  /** policy-engine: results reported by the nova-worker */
  engineResults: 'trellis.policy-engine.results',
  /** nova-worker: work orders decided by the engine */
  workerOrders: 'trellis.nova-worker.orders',
  /** gateway: RPC requests from other services */
  gatewayRpc: 'trellis.gateway.rpc',
} as const;

/** The names Trellis's processes register under in `services` (Senlin's `binary`; GET /v1/services). */
export const ServiceBinaries = {
  gateway: 'trellis-gateway',
  policyEngine: 'trellis-policy-engine',
  novaWorker: 'trellis-nova-worker',
} as const;

export const RoutingKeys = {
  actionRequested: 'action.requested',
  workOrder: 'work.order',
  workResult: 'work.result',
  rpcRequest: 'rpc.request',
  actionFinished: (clusterId: string | null, actionId: string) =>
    `action.finished.${clusterId ?? 'none'}.${actionId}`,
} as const;

export interface QueueSpec {
  name: string;
  exchange: string;
  routingKey: string;
  /** quorum queues for work that must survive broker restarts; RPC requests use a classic durable queue */
  type: 'quorum' | 'classic';
}

/** The consumer queues declared at start-up (each gets `<name>.dlq`). */
export const ConsumerQueues: QueueSpec[] = [
  { name: Queues.engineActions, exchange: Exchanges.actions, routingKey: RoutingKeys.actionRequested, type: 'quorum' },
  { name: Queues.engineResults, exchange: Exchanges.results, routingKey: RoutingKeys.workResult, type: 'quorum' },
  { name: Queues.workerOrders, exchange: Exchanges.work, routingKey: RoutingKeys.workOrder, type: 'quorum' },
  { name: Queues.gatewayRpc, exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, type: 'classic' },
];

export const deadLetterQueueOf = (queue: string) => `${queue}.dlq`;

/** Message headers Trellis sets (besides AMQP's own message_id/correlation_id/type). */
export const Headers = {
  schemaVersion: 'x-trellis-schema-version',
  /** why a message was dead-lettered by Trellis (validation error, permanent failure, delivery limit) */
  deadLetterReason: 'x-trellis-dead-letter-reason',
  /** the queue a dead-lettered message came from, so replay can send it back */
  originalQueue: 'x-trellis-original-queue',
  deliveryCount: 'x-delivery-count',
} as const;
