export * from './topology';
export * from './messages';
export * from './validate';
export * from './domain';
