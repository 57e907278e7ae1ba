import { join } from 'node:path';
import { loadEnforcer } from '@trellis/authz';
import { createLogger, usesSimulator, type Logger, type TrellisConfig } from '@trellis/common';
import { createKeystoneTrusts, createPasswordSignIn, createTokenValidator } from '@trellis/identity';
import { TrustedNovaPool, createCloudCatalog, createNovaClient } from '@trellis/nova';
import { IN_MEMORY } from '@trellis/persistence';
import { PolicyRegistry, type PolicyClass } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { brokerProbe, cloudProbe, databaseProbe, openInfrastructure, type Infrastructure } from '@trellis/runtime';
import { startGateway } from '../apps/gateway/src/bootstrap';
import { startNovaSimulator, type RunningSimulator } from '../apps/nova-simulator/src/simulator';
import { startNovaWorker } from '../apps/nova-worker/src/bootstrap';
import { startPolicyEngine, type RunningEngine } from '../apps/policy-engine/src/bootstrap';
import { PGLITE_TEMPLATE_DIR } from './pglite-template';

export interface Embedded {
  /** the REST API's base URL */
  url: string;
  /** /healthz, /readyz and /metrics of the whole process when TRELLIS_OPS_PORT gives them a port of their own */
  opsUrl: string | null;
  config: TrellisConfig;
  infra: Infrastructure;
  /** the built-in Nova simulator, when no real cloud is configured */
  simulator: RunningSimulator | null;
  registry: PolicyRegistry;
  /** the policy-engine (what it writes work orders as) */
  engine: RunningEngine;
  close(): Promise<void>;
}

/**
 * The embedded default: gateway, policy-engine, nova-worker (and the Nova simulator when no cloud
 * is configured) in one process, sharing one database and one bus. Same handlers and code paths as
 * the separate services; only the adapters differ (PGlite, in-memory bus, simulator) unless
 * DATABASE_URL / AMQP_URL / OS_AUTH_URL say otherwise.
 */
export interface EmbeddedOptions {
  /** policy types to register beside the built-ins and TRELLIS_POLICY_PLUGINS (tests load plugins from source) */
  policies?: ReadonlyArray<new (...args: never[]) => unknown>;
  /**
   * A migrated in-memory PGlite to start from instead of running initdb and the migrations (about
   * two seconds; tests: `migratedPgliteTemplate()` of @trellis/testing). Only with TRELLIS_DATA_DIR
   * ':memory:' and no DATABASE_URL; openDatabase refuses it otherwise.
   */
  pgliteTemplate?: Uint8Array;
}

export async function startEmbedded(
  config: TrellisConfig,
  logger: Logger = createLogger('trellis', config.logLevel),
  options: EmbeddedOptions = {},
): Promise<Embedded> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch((e) => logger.warn('close failed', { error: String(e) }));
  };
  // before anything starts: a broken TRELLIS_POLICY_FILE stops the process naming the rule
  const enforcer = loadEnforcer(config.rbac.policyFile);
  try {
    let simulator: RunningSimulator | null = null;
    let openstack = config.openstack;
    if (usesSimulator(config)) {
      simulator = await startNovaSimulator({
        host: config.simulator.host,
        port: config.simulator.port,
        buildDelayMs: config.simulator.buildDelayMs,
        demoPassword: config.simulator.demoPassword,
        adminPassword: config.simulator.adminPassword,
        servicePassword: config.simulator.servicePassword,
        topology: config.simulator.topologyFile ? await readTopology(config.simulator.topologyFile) : undefined,
        clusteringUrl: clusteringUrl(config) ?? undefined,
        stateFile: simulatorStateFile(config) ?? undefined,
        logger: logger.child({ component: 'nova-simulator' }),
      });
      if (simulator.restoredServers !== null) {
        logger.info('nova simulator state restored', { file: simulatorStateFile(config), servers: simulator.restoredServers });
      }
      closers.push(() => simulator!.close());
      // The worker and the gateway talk to the simulator exactly as they would to a real cloud: as
      // Trellis's own service user, the trustee of every user's trust.
      openstack = {
        ...openstack,
        authUrl: simulator.authUrl,
        username: 'trellis',
        password: config.simulator.servicePassword,
        projectName: 'service',
        userDomainName: 'Default',
        projectDomainName: 'Default',
        regionName: 'RegionOne',
      };
    }
    const registry = PolicyRegistry.withBuiltins();
    loadPolicyPlugins(registry, config.engine.plugins);
    // the registry checks the class is a decorated policy type and refuses a duplicate
    for (const policy of options.policies ?? []) registry.register(policy as unknown as PolicyClass);

    const infra = await openInfrastructure(config, logger, { pgliteTemplateDir: PGLITE_TEMPLATE_DIR, pgliteTemplate: options.pgliteTemplate });
    closers.push(() => infra.close());
    const dataSource = infra.database.dataSource;
    const novaLogger = logger.child({ component: 'nova' });
    const nova = createNovaClient(openstack, { logger: novaLogger });
    const trusted = new TrustedNovaPool(openstack, { logger: novaLogger });
    const trusts = createKeystoneTrusts(openstack, { logger: novaLogger });

    const worker = await startNovaWorker({ config, dataSource, bus: infra.bus, nova, trusted, trusts, logger: logger.child({ service: 'nova-worker' }) });
    closers.push(() => worker.close());
    const engine = await startPolicyEngine({ config, dataSource, bus: infra.bus, registry, logger: logger.child({ service: 'policy-engine' }) });
    closers.push(() => engine.close());
    const gateway = await startGateway({
      config,
      logger: logger.child({ service: 'gateway' }),
      dataSource,
      bus: infra.bus,
      registry,
      enforcer,
      tokenValidator: createTokenValidator(openstack, { adminProject: config.rbac.adminProject }),
      trusts,
      cloudCatalog: createCloudCatalog(openstack, { logger: novaLogger }),
      // one process: its readiness is the gateway's, the worker's cloud included
      probes: [databaseProbe(dataSource), brokerProbe(infra.bus), cloudProbe(nova.session)],
      signIn: createPasswordSignIn(openstack, { logger: novaLogger }),
    });
    closers.push(() => gateway.close());
    return { url: gateway.url, opsUrl: gateway.opsUrl, config, infra, simulator, registry, engine, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * Where the simulator's catalog says Senlin is, so `openstack cluster ...` finds the gateway. The
 * simulator starts first, so this is only known up front: the public URL, or a fixed port.
 */
function clusteringUrl(config: TrellisConfig): string | null {
  if (config.http.publicUrl) return config.http.publicUrl;
  if (config.http.port === 0) return null;
  const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}`;
}

/**
 * The simulator keeps its servers in the data directory, beside Trellis's database, so that clusters
 * still point at their (simulated) servers after `npm start` again; TRELLIS_DATA_DIR=:memory: keeps
 * both in memory.
 */
function simulatorStateFile(config: TrellisConfig): string | null {
  if (config.simulator.stateFile) return config.simulator.stateFile;
  return config.database.dataDir === IN_MEMORY ? null : join(config.database.dataDir, SIMULATOR_STATE_FILE);
}

export const SIMULATOR_STATE_FILE = 'nova-simulator.json';

async function readTopology(file: string) {
  const { readFile } = await import('node:fs/promises');
  const { loadTopology } = await import('../apps/nova-simulator/src/simulator');
  return loadTopology(await readFile(file, 'utf8'));
}
