import { describeMessageBusContract, CONTRACT_DELIVERY_LIMIT, contractTestQueues } from './bus.contract';
import type { BusLogger } from './bus-logger';
import { InMemoryMessageBus } from './in-memory-message-bus';

const quiet: BusLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

describeMessageBusContract('InMemoryMessageBus', async () =>
  new InMemoryMessageBus({ deliveryLimit: CONTRACT_DELIVERY_LIMIT, extraQueues: contractTestQueues, logger: quiet }),
);
