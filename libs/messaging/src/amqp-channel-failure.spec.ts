import { BrokerUnavailableError, MessageBusError, MessageTooLargeError, isPermanentPublishError } from './bus-errors';
import { channelFailure } from './amqp-message-bus';

/**
 * What a closed publisher channel becomes. The texts are RabbitMQ's own, as amqplib hands them
 * over: the size one captured on 2026-12-06 from RabbitMQ 3.10.8 with `max_message_size` lowered
 * to 1 MiB (`rabbitmqctl eval 'application:set_env(rabbit, max_message_size, 1048576).'`) and a
 * 2 MiB body published through AmqpMessageBus with a larger maxMessageBytes.
 */
describe('channelFailure', () => {
  const closed = (text: string) => Object.assign(new Error(text), { code: 406 });

  it("makes RabbitMQ's refusal of a message over max_message_size the permanent MessageTooLargeError", () => {
    const error = channelFailure(
      new Error('channel closed'),
      closed('Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - message size 2097160 is larger than configured max size 1048576"'),
      "publishing to 'trellis.work'",
      'c0ffee00-0000-4000-8000-000000000001',
    );
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(error).toMatchObject({ bytes: 2097160, limit: 1048576, refusedBy: 'broker', messageId: 'c0ffee00-0000-4000-8000-000000000001' });
    expect(error.message).toBe(
      "message c0ffee00-0000-4000-8000-000000000001 is 2,097,160 bytes (2 MiB), larger than the 1,048,576 bytes (1 MiB) the message broker takes (RabbitMQ's max_message_size)",
    );
    expect(isPermanentPublishError(error)).toBe(true);
  });

  it('keeps a lost channel transient and an unknown exchange plain', () => {
    const lost = channelFailure(new Error('Channel closed'), undefined, "publishing to 'trellis.work'");
    expect(lost).toBeInstanceOf(BrokerUnavailableError);
    expect(isPermanentPublishError(lost)).toBe(false);
    const exchange = channelFailure(new Error('x'), closed("Channel closed by server: 404 (NOT-FOUND) with message \"NOT_FOUND - no exchange 'trellis.nope' in vhost '/'\""), 'p');
    expect(exchange).toBeInstanceOf(MessageBusError);
    expect(exchange).not.toBeInstanceOf(BrokerUnavailableError);
    expect(exchange.message).toMatch(/^unknown exchange 'trellis.nope'/);
    expect(isPermanentPublishError(exchange)).toBe(false);
  });
});
