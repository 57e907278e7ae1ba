import 'reflect-metadata';
import { DEFAULT_OPS_PORTS, createLogger, loadConfig } from '@trellis/common';
import { startOpsServer } from '@trellis/observability';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { brokerProbe, databaseProbe, exitOnStartupError, onShutdownSignal, startOnInfrastructure } from '@trellis/runtime';
import { startPolicyEngine } from './bootstrap';

/** The policy-engine alone: DATABASE_URL and AMQP_URL point it at PostgreSQL and RabbitMQ. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('policy-engine', config.logLevel, { instance: config.instanceId });
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, config.engine.plugins);
  const { infra, running: engine } = await startOnInfrastructure(config, logger, 'policy-engine', (infra) =>
    startPolicyEngine({ config, dataSource: infra.database.dataSource, bus: infra.bus, registry, logger }),
  );
  const ops = await startOpsServer({
    host: config.ops.host,
    port: config.ops.port ?? DEFAULT_OPS_PORTS['policy-engine'],
    probes: [databaseProbe(infra.database.dataSource), brokerProbe(infra.bus)],
    metrics: config.ops.metrics,
  });
  logger.info('policy-engine started', { health_and_metrics: ops.url });
  onShutdownSignal(logger, async () => {
    await ops.close();
    await engine.close();
    await infra.close();
  });
}

main().catch(exitOnStartupError(createLogger('policy-engine'), 'policy-engine'));
