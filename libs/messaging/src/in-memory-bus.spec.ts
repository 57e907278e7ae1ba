import { silentLogger } from '@trellis/common';
import { CONTRACT_DELIVERY_LIMIT, contractTestQueues, describeMessageBusContract } from './bus.contract';
import { InMemoryMessageBus } from './in-memory-message-bus';

describeMessageBusContract('InMemoryMessageBus', async (options) =>
  new InMemoryMessageBus({ deliveryLimit: CONTRACT_DELIVERY_LIMIT, extraQueues: contractTestQueues, logger: silentLogger, ...options }),
);
