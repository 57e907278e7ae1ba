import type { DataSource } from 'typeorm';
import { errorMessage, type Logger, type TrellisConfig } from '@trellis/common';
import { createMessageBus, type MessageBus } from '@trellis/messaging';
import { PROBE_TIMEOUT_MS, observeDeployment, observeOutbox, within } from '@trellis/observability';
import { OutboxRelay, ServiceHeartbeat, deploymentStats, isDatabaseUnavailable, openDatabase, outboxStats, type Database, type ServiceRegistration } from '@trellis/persistence';

/**
 * What every service stands on: the database (PostgreSQL, or PGlite in the embedded default), the
 * message bus (RabbitMQ, or in memory) and the outbox relay that publishes what the service
 * committed. The embedded default opens this once and shares it between the services.
 */
export interface Infrastructure {
  database: Database;
  bus: MessageBus;
  relay: OutboxRelay;
  close(): Promise<void>;
}

export interface InfrastructureOptions {
  /** a prepared PGlite data directory to copy into an empty TRELLIS_DATA_DIR (the embedded default's) */
  pgliteTemplateDir?: string;
  /** a migrated in-memory PGlite to start from (`createPgliteTemplate()`; tests): TRELLIS_DATA_DIR must be ':memory:' */
  pgliteTemplate?: Uint8Array;
}

export async function openInfrastructure(config: TrellisConfig, logger: Logger, options: InfrastructureOptions = {}): Promise<Infrastructure> {
  const database = await openDatabase(config.database, logger.child({ component: 'database' }), {
    pgliteTemplateDir: options.pgliteTemplateDir,
    pgliteTemplate: options.pgliteTemplate,
  });
  let bus: MessageBus;
  try {
    bus = createMessageBus({ url: config.amqp.url, deliveryLimit: config.amqp.deliveryLimit, maxMessageBytes: config.amqp.maxMessageBytes }, logger.child({ component: 'bus' }));
    await bus.start();
  } catch (e) {
    await database.close();
    throw e;
  }
  const relay = new OutboxRelay(database.dataSource, (m) => bus.publish(m), {
    batchSize: 100,
    pollIntervalMs: 1000,
    logger: logger.child({ component: 'outbox-relay' }),
  });
  relay.start();
  // what the outbox holds, read when /metrics is scraped
  const unobserveOutbox = observeOutbox(() => within(PROBE_TIMEOUT_MS, outboxStats(database.dataSource)));
  // the actions not ended and the processes registered, the same way
  const unobserveDeployment = observeDeployment(() => within(PROBE_TIMEOUT_MS, deploymentStats(database.dataSource)));
  const unobserve = () => {
    unobserveOutbox();
    unobserveDeployment();
  };
  logger.info('infrastructure ready', {
    database: database.kind,
    bus: config.amqp.url ? 'rabbitmq' : 'in-memory',
  });
  return {
    database,
    bus,
    relay,
    close: async () => {
      unobserve();
      await relay.stop();
      await bus.close().catch((e) => logger.warn('closing the bus failed', { error: errorMessage(e) }));
      await database.close();
    },
  };
}

/** How long a service keeps trying to start while the database cannot take it. */
export const STARTUP_DATABASE_WAIT_MS = 120_000;

/**
 * Runs `start` and, while it fails because the database cannot be talked to (down, starting up, or
 * out of connections: `isDatabaseUnavailable`), runs it again every `intervalMs` for up to `maxMs`,
 * saying so in the log. A service started beside its database (compose, a node reboot) or against
 * a server that is briefly out of connections then comes up by itself instead of exiting; any
 * other error, or the same one past the deadline, is thrown as it was. `start` must release what it
 * opened before it throws: it is called again.
 */
export async function startWhileDatabaseUnavailable<T>(
  logger: Logger,
  service: string,
  start: () => Promise<T>,
  options: { maxMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const { maxMs = STARTUP_DATABASE_WAIT_MS, intervalMs = 2_000 } = options;
  const deadline = Date.now() + maxMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (!isDatabaseUnavailable(e) || Date.now() + intervalMs > deadline) throw e;
      logger.warn(`${service} could not start yet: the database is unavailable; trying again`, { error: errorMessage(e), attempt, retry_in_ms: intervalMs });
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * A stand-alone service's start: its infrastructure, then the service on it, again and again while
 * the database is unavailable (`startWhileDatabaseUnavailable`); a failed attempt closes the
 * infrastructure it opened before the next one.
 */
export async function startOnInfrastructure<T>(
  config: TrellisConfig,
  logger: Logger,
  service: string,
  start: (infra: Infrastructure) => Promise<T>,
): Promise<{ infra: Infrastructure; running: T }> {
  return startWhileDatabaseUnavailable(logger, service, async () => {
    const infra = await openInfrastructure(config, logger);
    try {
      return { infra, running: await start(infra) };
    } catch (e) {
      await infra.close().catch(() => undefined);
      throw e;
    }
  });
}

/**
 * The service's row in GET /v1/services, kept fresh while it runs. When the first write fails the
 * already started application (its consumers) is closed before the error goes on, so the caller can
 * start again or exit cleanly.
 */
export async function startHeartbeatOrClose(
  app: { close(): Promise<void> },
  dataSource: DataSource,
  registration: ServiceRegistration,
  logger: Logger,
): Promise<ServiceHeartbeat> {
  try {
    return await ServiceHeartbeat.start(dataSource, registration, logger);
  } catch (e) {
    await app.close();
    throw e;
  }
}

/** Runs `stop` once on SIGTERM/SIGINT and exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info('shutting down', { signal });
    stop()
      .then(() => process.exit(0))
      .catch((e) => {
        logger.error('shutdown failed', { error: errorMessage(e) });
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => handler('SIGTERM'));
  process.once('SIGINT', () => handler('SIGINT'));
}

/** Print a configuration or start-up error naming its cause, and exit non-zero. */
export function exitOnStartupError(logger: Logger, service: string) {
  return (e: unknown) => {
    logger.error(`${service} could not start`, { error: errorMessage(e) });
    process.stderr.write(`${service}: ${errorMessage(e)}\n`);
    process.exit(1);
  };
}

/** What every service's module is started with (each adds its own: registry, Nova client, ...). */
export interface ServiceDeps {
  config: TrellisConfig;
  dataSource: DataSource;
  bus: MessageBus;
  logger: Logger;
}
