import { oversizedWorkOrder } from '../support/oversized.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/** docs/RELIABILITY.md §16 on RabbitMQ + PostgreSQL: the AMQP bus refuses the order before sending it. */
describe('a message larger than the broker takes (RabbitMQ + PostgreSQL, TRELLIS_MAX_MESSAGE_BYTES=65536)', () => {
  let t: TestTrellis;

  beforeAll(async () => {
    t = await startTestTrellis({ stack: 'rabbitmq+postgres', env: { TRELLIS_MAX_MESSAGE_BYTES: '65536', TRELLIS_RESUME_INTERVAL_SECONDS: '3600' } });
  });
  afterAll(() => t?.close());

  it('fails the action whose work order is too large at once, with the reason, and the next action of the engine goes through', () =>
    oversizedWorkOrder(t.trellis));
});
