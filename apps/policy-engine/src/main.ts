import 'reflect-metadata';
import { createLogger, loadConfig } from '@trellis/common';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { exitOnStartupError, onShutdownSignal, openInfrastructure } from '@trellis/runtime';
import { startPolicyEngine } from './bootstrap';

/** The policy-engine alone: DATABASE_URL and AMQP_URL point it at PostgreSQL and RabbitMQ. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('policy-engine', config.logLevel, { instance: config.instanceId });
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, config.engine.plugins);
  const infra = await openInfrastructure(config, logger);
  const engine = await startPolicyEngine({
    config,
    dataSource: infra.database.dataSource,
    bus: infra.bus,
    registry,
    logger,
  });
  logger.info('policy-engine started');
  onShutdownSignal(logger, async () => {
    await engine.close();
    await infra.close();
  });
}

main().catch(exitOnStartupError(createLogger('policy-engine'), 'policy-engine'));
