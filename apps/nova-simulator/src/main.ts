import { readFileSync } from 'node:fs';
import { createLogger, errorMessage, loadConfig } from '@trellis/common';
import { loadTopology, startNovaSimulator, type Topology } from './simulator';

/** Runs the simulator on its own: `npm run start:nova-simulator`. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('nova-simulator', config.logLevel);
  const s = config.simulator;
  let topology: Topology | undefined;
  if (s.topologyFile !== null) {
    let content: string;
    try {
      content = readFileSync(s.topologyFile, 'utf8');
    } catch (e) {
      throw new Error(`SIMULATOR_TOPOLOGY_FILE: cannot read '${s.topologyFile}': ${errorMessage(e)}`);
    }
    try {
      topology = loadTopology(content);
    } catch (e) {
      throw new Error(`SIMULATOR_TOPOLOGY_FILE '${s.topologyFile}': ${errorMessage(e)}`);
    }
  }
  const sim = await startNovaSimulator({
    host: s.host,
    port: s.port,
    buildDelayMs: s.buildDelayMs,
    topology,
    demoPassword: s.demoPassword,
    adminPassword: s.adminPassword,
    servicePassword: s.servicePassword,
    publicUrl: s.publicUrl ?? undefined,
    stateFile: s.stateFile ?? undefined,
    logger,
  });
  logger.info('nova simulator listening', {
    url: sim.url,
    auth_url: sim.authUrl,
    compute_url: sim.computeUrl,
    ...(s.stateFile ? { state_file: s.stateFile, restored_servers: sim.restoredServers ?? 0 } : {}),
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('nova simulator stopping', { signal });
    sim.close().then(
      () => process.exit(0),
      (e) => {
        logger.error('nova simulator did not stop cleanly', { error: errorMessage(e) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e) => {
  process.stderr.write(`nova-simulator: ${errorMessage(e)}\n`);
  process.exit(1);
});
