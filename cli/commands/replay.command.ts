import { ConsumerQueues, Headers } from '@trellis/contracts';
import { createLogger, loadConfig, type TrellisConfig } from '@trellis/common';
import { createMessageBus, type MessageBus } from '@trellis/messaging';
import { OutboxRelay, openDatabase, outboxStats, replayStuckActions } from '@trellis/persistence';
import { PolicyRegistry, loadPolicyPlugins } from '@trellis/policies';
import { flag, parseArgs } from './args';
import { replayDecisions } from './replay-decisions';

/**
 * `trellis replay`: recovery after a crash. Re-publishes actions stuck in READY/RUNNING (through
 * the outbox, so the usual relay confirms each one) and moves dead-lettered messages back to the
 * queue they came from. Prints a JSON summary of what was replayed.
 */
export async function runReplay(args: string[]): Promise<number> {
  const parsed = parseArgs(args, ['no-dead-letters', 'decisions']);
  const config = loadConfig();
  const logger = createLogger('trellis-replay', config.logLevel);

  if (flag(parsed, 'decisions')) {
    const registry = PolicyRegistry.withBuiltins();
    loadPolicyPlugins(registry, config.engine.plugins);
    const database = await openDatabase(config.database, logger);
    try {
      const report = await replayDecisions(database.dataSource, registry, { since: flag(parsed, 'since') });
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      return report.differing.length ? 1 : 0;
    } finally {
      await database.close();
    }
  }

  if (!config.amqp.url || !config.database.url) {
    process.stderr.write(
      'trellis replay: set DATABASE_URL and AMQP_URL to the PostgreSQL and RabbitMQ the services use.\n' +
        'With the embedded default (one process), use the admin API instead: POST /v1/actions/{id}/replay.\n',
    );
    return 2;
  }
  const olderThan = Number(flag(parsed, 'older-than') ?? config.engine.leaseSeconds);
  if (!Number.isFinite(olderThan) || olderThan < 0) {
    process.stderr.write(`trellis replay: --older-than must be a number of seconds, got '${flag(parsed, 'older-than')}'\n`);
    return 2;
  }
  const summary = await replay(config, {
    actionIds: parsed.flags.get('action') ?? [],
    olderThanSeconds: olderThan,
    deadLetters: !flag(parsed, 'no-dead-letters'),
  });
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  return 0;
}

export interface ReplaySummary {
  actions: Array<{ id: string; action: string; status: string; why: string }>;
  dead_letters: Record<string, number>;
}

export async function replay(
  config: TrellisConfig,
  options: { actionIds: string[]; olderThanSeconds: number; deadLetters: boolean },
): Promise<ReplaySummary> {
  const logger = createLogger('trellis-replay', config.logLevel);
  const database = await openDatabase(config.database, logger);
  const bus = createMessageBus({ url: config.amqp.url, deliveryLimit: config.amqp.deliveryLimit }, logger);
  try {
    await bus.start();
    const stuck = await replayStuckActions(
      database.dataSource,
      { actionIds: options.actionIds, olderThanSeconds: options.olderThanSeconds },
      'replay',
    );
    await drainOutbox(database.dataSource, bus);
    const dead: Record<string, number> = {};
    if (options.deadLetters) {
      for (const q of ConsumerQueues) dead[q.name] = await requeueDeadLetters(bus, q.name);
    }
    return { actions: stuck.map(({ id, action, status, why }) => ({ id, action, status, why })), dead_letters: dead };
  } finally {
    await bus.close();
    await database.close();
  }
}

/** Publish what replay wrote to the outbox before exiting (a running service's relay would too). */
async function drainOutbox(dataSource: import('typeorm').DataSource, bus: MessageBus): Promise<void> {
  const relay = new OutboxRelay(dataSource, (m) => bus.publish(m), { batchSize: 100, pollIntervalMs: 50 });
  relay.start();
  try {
    for (let i = 0; i < 600 && (await outboxStats(dataSource)).pending > 0; i++) {
      relay.kick();
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await relay.stop();
  }
}

/** Move every message of `<queue>.dlq` back to the exchange and routing key that feed `queue`. */
async function requeueDeadLetters(bus: MessageBus, queue: string): Promise<number> {
  const spec = ConsumerQueues.find((q) => q.name === queue)!;
  return bus.drainDeadLetters(queue, 100_000, async (dead) => {
    const headers: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries(dead.message.headers)) {
      if (k === Headers.deadLetterReason || k === Headers.originalQueue || k.startsWith('x-death') || k.startsWith('x-first-death') || k.startsWith('x-last-death')) continue;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') headers[k] = v;
    }
    headers['x-trellis-replayed-from'] = `${queue}.dlq: ${dead.reason}`;
    await bus.publish({
      exchange: spec.exchange,
      routingKey: spec.routingKey,
      body: dead.message.body ?? dead.message.raw.toString('utf8'),
      messageId: dead.message.messageId ?? `replayed-${Date.now()}`,
      correlationId: dead.message.correlationId,
      type: dead.message.type,
      headers,
    });
  });
}
