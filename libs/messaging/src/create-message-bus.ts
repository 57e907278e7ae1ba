import type { Logger } from '@trellis/common';
import type { QueueSpec } from '@trellis/contracts';
import { AmqpMessageBus } from './amqp-message-bus';
import type { MessageBus } from './bus.port';
import { InMemoryMessageBus } from './in-memory-message-bus';

export interface MessageBusConfig {
  /** AMQP_URL; null selects the in-memory bus (the embedded default) */
  url: string | null;
  deliveryLimit: number;
  /** the largest encoded message body sent (TRELLIS_MAX_MESSAGE_BYTES; default 16 MiB) */
  maxMessageBytes?: number;
  /** queues to declare besides the shared topology */
  extraQueues?: QueueSpec[];
  connectionName?: string;
}

/** RabbitMQ when AMQP_URL is set, otherwise the in-process bus with the same semantics. */
export function createMessageBus(config: MessageBusConfig, logger?: Logger): MessageBus {
  const common = { deliveryLimit: config.deliveryLimit, maxMessageBytes: config.maxMessageBytes, logger, extraQueues: config.extraQueues };
  return config.url
    ? new AmqpMessageBus({ ...common, url: config.url, connectionName: config.connectionName })
    : new InMemoryMessageBus(common);
}
