export * from './infrastructure';
export * from './policy-plugins';
export * from './readiness-probes';
