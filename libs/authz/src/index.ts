export * from './rule';
export * from './enforcer';
export * from './defaults';
export * from './policy-file';
export * from './sample';
