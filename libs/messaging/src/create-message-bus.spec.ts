import { silentLogger } from '@trellis/common';
import { AmqpMessageBus } from './amqp-message-bus';
import { createMessageBus } from './create-message-bus';
import { InMemoryMessageBus } from './in-memory-message-bus';

describe('createMessageBus', () => {
  it('uses RabbitMQ when AMQP_URL is set and the in-memory bus otherwise', () => {
    expect(createMessageBus({ url: 'amqp://guest:guest@127.0.0.1:5672', deliveryLimit: 5 }, silentLogger)).toBeInstanceOf(
      AmqpMessageBus,
    );
    expect(createMessageBus({ url: null, deliveryLimit: 5 }, silentLogger)).toBeInstanceOf(InMemoryMessageBus);
  });

  it('names the bad setting', () => {
    expect(() => createMessageBus({ url: 'http://broker', deliveryLimit: 5 })).toThrow(/AMQP_URL must start with amqp/);
    expect(() => createMessageBus({ url: 'not a url', deliveryLimit: 5 })).toThrow(/AMQP_URL is not a valid URL/);
    expect(() => createMessageBus({ url: null, deliveryLimit: 0 })).toThrow(/deliveryLimit/);
    expect(() => createMessageBus({ url: 'amqp://mq-1:5672,http://mq-2:5672', deliveryLimit: 5 })).toThrow(/AMQP_URL must start with amqp.*mq-2/);
    expect(createMessageBus({ url: 'amqp://mq-1:5672, amqp://mq-2:5672', deliveryLimit: 5 }, silentLogger)).toBeInstanceOf(AmqpMessageBus);
  });

  it('refuses to work before start', async () => {
    const bus = createMessageBus({ url: null, deliveryLimit: 5 }, silentLogger);
    await expect(bus.depth('trellis.policy-engine.actions')).rejects.toThrow(/call start\(\) first/);
  });
});
