export * from './load-snapshot';
export * from './decide-action';
export * from './engine-plan';
export * from './drift';
export * from './failed-scale-out';
export * from './visibility';
export * from './profile-update';
