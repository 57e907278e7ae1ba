import 'reflect-metadata';
import { loadEnforcer } from '@trellis/authz';
import { ConfigError, createLogger, loadConfig, usesSimulator } from '@trellis/common';
import { createKeystoneTrusts, createPasswordSignIn, createTokenValidator } from '@trellis/identity';
import { createCloudCatalog } from '@trellis/nova/cloud-catalog';
import { enableProcessMetrics } from '@trellis/observability';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { exitOnStartupError, onShutdownSignal, startOnInfrastructure } from '@trellis/runtime';
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
  if (config.ops.metrics) enableProcessMetrics();
  const enforcer = loadEnforcer(config.rbac.policyFile);
  const tokenValidator = createTokenValidator(config.openstack, { adminProject: config.rbac.adminProject });
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, config.engine.plugins);
  const { infra, running: gateway } = await startOnInfrastructure(config, logger, 'gateway', (infra) =>
    startGateway({
      config,
      dataSource: infra.database.dataSource,
      bus: infra.bus,
      tokenValidator,
      trusts: createKeystoneTrusts(config.openstack, { logger }),
      cloudCatalog: createCloudCatalog(config.openstack, { logger }),
      signIn: createPasswordSignIn(config.openstack, { logger }),
      registry,
      enforcer,
      logger,
    }),
  );
  onShutdownSignal(logger, async () => {
    await gateway.close();
    await infra.close();
  });
}

main().catch(exitOnStartupError(createLogger('gateway'), 'gateway'));
