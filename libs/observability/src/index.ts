export * from './metrics';
export * from './health/readiness';
export * from './health/probes.controller';
export * from './health/ops-server';
