export * from './findings';
export * from './detect-drift';
export * from './plan-repair';
