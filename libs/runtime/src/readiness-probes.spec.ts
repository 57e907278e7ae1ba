import { silentLogger } from '@trellis/common';
import { BrokerUnavailableError, InMemoryMessageBus, type MessageBus } from '@trellis/messaging';
import { openTestDatabase } from '@trellis/testing/database';
import type { DataSource } from 'typeorm';
import { brokerProbe, databaseProbe } from './readiness-probes';

describe('readiness probes', () => {
  it('the database answers; refused, it is unavailable with the code and no address; a closed pool is an error', async () => {
    const db = await openTestDatabase();
    const probe = databaseProbe(db.dataSource);
    await expect(probe.check()).resolves.toBeUndefined();
    await db.close();
    await expect(probe.check()).rejects.toThrow(/^error$/);

    const refused = {
      query: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });
      },
    } as unknown as DataSource;
    await expect(databaseProbe(refused).check()).rejects.toThrow(/^unavailable \(ECONNREFUSED\)$/);
  });

  it('the broker answers while the bus runs; a lost RabbitMQ connection and a closed bus are named', async () => {
    const bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    await expect(brokerProbe(bus).check()).resolves.toBeUndefined();
    await bus.close();
    await expect(brokerProbe(bus).check()).rejects.toThrow('error (MessageBusError)');

    const lost = {
      depth: async () => {
        throw new BrokerUnavailableError('the RabbitMQ connection (amqp://guest:***@10.0.0.5:5672) is lost; reconnecting (attempt 3)');
      },
    } as unknown as MessageBus;
    await expect(brokerProbe(lost).check()).rejects.toThrow(/^unavailable \(connection lost\)$/);
  });
});
