import 'reflect-metadata';
import { DEFAULT_OPS_PORTS, createLogger, loadConfig, usesSimulator } from '@trellis/common';
import { createKeystoneTrusts } from '@trellis/identity';
import { startOpsServer } from '@trellis/observability';
import { TrustedNovaPool, createNovaClient } from '@trellis/nova';
import { brokerProbe, cloudProbe, databaseProbe, exitOnStartupError, onShutdownSignal, startOnInfrastructure } from '@trellis/runtime';
import { startNovaWorker } from './bootstrap';

/**
 * The nova-worker alone. It needs a cloud: OS_AUTH_URL with the usual OS_* variables (Trellis's own
 * service user, the trustee of the users' trusts: password auth), or OS_CLOUD
 * with clouds.yaml (a stand-alone worker does not start a simulator; run `npm run
 * start:nova-simulator` and point OS_AUTH_URL at it).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('nova-worker', config.logLevel, { instance: config.instanceId });
  if (usesSimulator(config)) {
    throw new Error('OS_AUTH_URL (or OS_CLOUD) is not set: the nova-worker needs a Keystone to authenticate against');
  }
  const nova = createNovaClient(config.openstack, { logger });
  const { infra, running: worker } = await startOnInfrastructure(config, logger, 'nova-worker', (infra) =>
    startNovaWorker({
      config,
      dataSource: infra.database.dataSource,
      bus: infra.bus,
      nova,
      trusted: new TrustedNovaPool(config.openstack, { logger }),
      trusts: createKeystoneTrusts(config.openstack, { logger }),
      logger,
    }),
  );
  const ops = await startOpsServer({
    host: config.ops.host,
    port: config.ops.port ?? DEFAULT_OPS_PORTS['nova-worker'],
    probes: [databaseProbe(infra.database.dataSource), brokerProbe(infra.bus), cloudProbe(nova.session)],
    metrics: config.ops.metrics,
  });
  logger.info('nova-worker started', { compute_microversion: await nova.microversion(), health_and_metrics: ops.url });
  onShutdownSignal(logger, async () => {
    await ops.close();
    await worker.close();
    await infra.close();
  });
}

main().catch(exitOnStartupError(createLogger('nova-worker'), 'nova-worker'));
