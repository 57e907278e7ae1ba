import { createLogger, loadConfig, usesSimulator } from '@trellis/common';
import { onShutdownSignal } from '@trellis/runtime';
import { startEmbedded } from '../embedded';

/** `trellis start`: the whole of Trellis in one process; prints how to use it. */
export async function runStart(_args: string[]): Promise<number> {
  const config = loadConfig();
  const logger = createLogger('trellis', config.logLevel, { instance: config.instanceId });
  const started = Date.now();
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
      `  demo credentials: user 'demo', password '${config.simulator.demoPassword}', project 'demo' (Keystone at ${sim.authUrl})`,
      '',
      'Try:',
      '  export OS_TOKEN=$(npm run -s trellis -- token)',
      `  curl -s -H "X-Auth-Token: $OS_TOKEN" ${trellis.url}/v1/clusters`,
      '  (README.md walks through creating a profile and a cluster and scaling it out)',
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');
  onShutdownSignal(logger, () => trellis.close());
  return -1;
}
