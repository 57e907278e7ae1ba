import { createLogger, loadConfig, usesSimulator } from '@trellis/common';
import { enableProcessMetrics } from '@trellis/observability';
import { onShutdownSignal } from '@trellis/runtime';
import { startEmbedded } from '../embedded';
import { runCommand, type CommandSpec } from './args';
import { removeRunningInstance, writeRunningInstance } from './running-instance';

export const START_COMMAND: CommandSpec = {
  name: 'start',
  summary:
    'Run the gateway, the policy-engine and the nova-worker (and the Nova simulator unless OS_AUTH_URL or\n' +
    'OS_CLOUD is set) in one process. Configuration comes from the environment (README.md).',
  options: {},
};

/** `trellis start`: the whole of Trellis in one process; prints how to use it. */
export function runStart(args: string[]): Promise<number> {
  return runCommand(START_COMMAND, args, start);
}

async function start(): Promise<number> {
  const config = loadConfig();
  const logger = createLogger('trellis', config.logLevel, { instance: config.instanceId });
  const started = Date.now();
  if (config.ops.metrics) enableProcessMetrics();
  const trellis = await startEmbedded(config, logger);
  const sim = trellis.simulator;
  const lines = [
    '',
    `Trellis is running (${((Date.now() - started) / 1000).toFixed(1)} s): clustering API at ${trellis.url}/v1`,
    `  database: ${trellis.infra.database.kind === 'pglite' ? `PGlite in ${config.database.dataDir}` : 'PostgreSQL'}` +
      `, bus: ${config.amqp.url ? 'RabbitMQ' : 'in memory'}` +
      `, Nova: ${sim ? `built-in simulator at ${sim.url}` : 'the configured cloud'}`,
  ];
  if (sim && usesSimulator(config)) {
    lines.push(
      `  users (Keystone at ${sim.authUrl}): 'demo' (member of project demo) and 'alt_demo' (member of alt_demo), password '${config.simulator.demoPassword}';`,
      `    'viewer' (reader of demo), password '${config.simulator.demoPassword}'; 'admin' (cloud admin), password '${config.simulator.adminPassword}'`,
      `  Trellis acts in Nova as each user, with a Keystone trust it makes on the user's first action (docs/SECURITY.md)`,
      '',
      'Try:',
      `  the web page: ${trellis.url}/ui (user demo, password ${config.simulator.demoPassword}, project demo)`,
      '  export OS_TOKEN=$(npm run -s trellis -- token)',
      `  curl -s -H "X-Auth-Token: $OS_TOKEN" ${trellis.url}/v1/clusters`,
      '  (README.md walks through creating a profile and a cluster and scaling it out)',
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');
  if (sim && usesSimulator(config)) {
    // `trellis token` in another terminal finds this simulator's Keystone through the data directory
    writeRunningInstance(config.database.dataDir, { pid: process.pid, api_url: trellis.url, auth_url: sim.authUrl, started_at: new Date(started).toISOString() });
  }
  onShutdownSignal(logger, async () => {
    removeRunningInstance(config.database.dataDir);
    await trellis.close();
  });
  return -1;
}
