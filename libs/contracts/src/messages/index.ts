export * from './envelope.dto';
export * from './action-requested.dto';
export * from './work-order.dto';
export * from './work-result.dto';
export * from './action-finished.dto';
