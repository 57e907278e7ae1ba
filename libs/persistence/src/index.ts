export * from './entities';
export { ALL_MIGRATIONS } from './migrations';
export {
  buildPgliteTemplateDir,
  createPgliteTemplate,
  IN_MEMORY,
  openDatabase,
  redactUrl,
  type Database,
  type DatabaseKind,
  type DatabaseSettings,
  type OpenDatabaseOptions,
} from './database';
export { PendingMigrationsError, migrationStatus, runMigrationsLocked, type MigrationStatus } from './migrate';
export { TEMPLATE_MANIFEST, type PgliteTemplateManifest } from './pglite-template';
export { inTransaction, isRetryableTransactionError, sqlState, type TransactionOptions } from './transaction';
export { afterCommit } from './after-commit';
export { hotQuery, usePreparedStatements, usesPreparedStatements } from './prepared';
export { isDatabaseUnavailable, untilDatabaseAnswers, type Queryable } from './unavailable';
export { addAllToOutbox, addToOutbox, outboxStats, purgePublishedOutbox, type AddToOutboxOptions, type OutboxStats, type SqlStatement } from './outbox/outbox';
export { OutboxRelay, onOutboxSetAside, type OutboxRelayOptions, type SetAsideRow } from './outbox/outbox-relay';
export { markProcessed, markProcessedAndLockAction } from './inbox';
export {
  pruneOlderThan,
  RETENTION_KINDS,
  type PruneCounts,
  type PruneOptions,
  type RetentionKind,
} from './retention/retention';
export { findStuckActions, enqueueActionMessages, replayStuckActions, type StuckAction, type ReplayFilter } from './replay/replay-actions';
export {
  ServiceHeartbeat,
  deploymentStats,
  type DeploymentStats,
  acceptedVersionsOf,
  listServices,
  SERVICE_DOWN_AFTER_MS,
  SERVICE_REPORT_INTERVAL_MS,
  type ServiceAcceptance,
  type ServiceRegistration,
  type ServiceView,
} from './service-registry';
