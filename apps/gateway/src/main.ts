import 'reflect-metadata';
import { ConfigError, createLogger, errorMessage, loadConfig, usesSimulator } from '@trellis/common';
import { createMessageBus } from '@trellis/messaging';
import { createTokenValidator } from '@trellis/nova';
import { OutboxRelay, openDatabase } from '@trellis/persistence';
import { PolicyRegistry, loadPolicyPlugins } from '@trellis/policies';
import { startGateway } from './bootstrap';

/**
 * The gateway as a process of its own: PostgreSQL (or PGlite), the bus, Keystone for tokens, and the
 * outbox relay that publishes what the gateway commits. SIGTERM/SIGINT close everything in order.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('gateway', config.logLevel, { instance: config.instanceId });
  if (usesSimulator(config)) {
    throw new ConfigError(
      'OS_AUTH_URL',
      'is needed by the stand-alone gateway to validate tokens (or set OS_CLOUD); `trellis start` runs the embedded default with the simulator',
    );
  }
  const tokenValidator = createTokenValidator(config.openstack);
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, config.engine.plugins);
  const db = await openDatabase(config.database, logger.child({ component: 'persistence' }));
  const bus = createMessageBus({ url: config.amqp.url, deliveryLimit: config.amqp.deliveryLimit, connectionName: 'trellis-gateway' }, logger);
  await bus.start();
  const relay = new OutboxRelay(db.dataSource, (m) => bus.publish(m), { batchSize: 100, pollIntervalMs: 1000, logger });
  relay.start();
  const gateway = await startGateway({
    config,
    dataSource: db.dataSource,
    bus,
    tokenValidator,
    registry,
    onOutboxWritten: () => relay.kick(),
    logger,
  });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info('shutting down', { signal });
    try {
      await gateway.close();
      await relay.stop();
      await bus.close();
      await db.close();
      process.exit(0);
    } catch (e) {
      logger.error('shutdown failed', { error: errorMessage(e) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  process.stderr.write(`${e instanceof ConfigError ? e.message : (e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
