export * from './config';
export * from './errors';
export * from './auth';
export * from './logger';
export * from './log-context';
export * from './cloud-catalog';
export * from './failure-streak';
export * from './recent-map';
