export * from './bus.port';
export * from './bus-errors';
export * from './bus-topology';
export * from './consumer-handle';
export { IN_REPLY_TO_HEADER } from './message-codec';
export * from './in-memory-message-bus';
export * from './amqp-message-bus';
export * from './create-message-bus';
