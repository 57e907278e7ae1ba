import { createLogger, loadConfig, type TrellisConfig } from '@trellis/common';
import { createMessageBus, type MessageBus } from '@trellis/messaging';
import { OutboxRelay, openDatabase, outboxStats, replayStuckActions } from '@trellis/persistence';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { UsageError, booleanOption, listOption, missingSetting, runCommand, stringOption, type CommandSpec, type ParsedCommand } from './args';
import { countRepublished, replayDeadLetters, type ReplayedMessage } from './dead-letter-replay';
import { replayDecisions } from './replay-decisions';

export const REPLAY_COMMAND: CommandSpec = {
  name: 'replay',
  summary:
    'Re-publish stuck actions and move dead-lettered messages back to their queues, each at most once per run;\n' +
    'with --decisions, re-evaluate stored decisions with the current code. Prints a JSON report.',
  options: {
    action: { type: 'string', multiple: true, value: 'ID', help: 'only this action: its row if stuck, and its dead-lettered messages' },
    'older-than': { type: 'string', value: 'SECONDS', help: 'READY/RUNNING actions idle this long (default: TRELLIS_LEASE_SECONDS)' },
    'no-dead-letters': { type: 'boolean', help: 'leave the dead-letter queues alone' },
    decisions: { type: 'boolean', help: 're-evaluate stored decisions and list those that would now differ' },
    since: { type: 'string', value: 'TIME', help: 'with --decisions: only decisions made at or after this ISO time' },
  },
  notes: [
    'Needs DATABASE_URL and AMQP_URL (the PostgreSQL and RabbitMQ the services use). The dead-letter',
    'queues are read as they are when the run starts: a message dead-lettered again during the run',
    '(a poison message) waits for the next run.',
  ],
};

/**
 * `trellis replay`: recovery after a crash. Re-publishes actions stuck in READY/RUNNING (through
 * the outbox, so the usual relay confirms each one) and moves dead-lettered messages back to the
 * queue they came from. Prints a JSON report: every action and every message, with what was done.
 */
export function runReplay(args: string[]): Promise<number> {
  return runCommand(REPLAY_COMMAND, args, async (parsed) => {
    const config = loadConfig();
    if (booleanOption(parsed, 'decisions')) return runDecisionReplay(config, parsed);
    if (stringOption(parsed, 'since') !== undefined) throw new UsageError('--since goes with --decisions');
    const olderThan = Number(stringOption(parsed, 'older-than') ?? config.engine.leaseSeconds);
    if (!Number.isFinite(olderThan) || olderThan < 0) {
      throw new UsageError(`--older-than must be a number of seconds, got '${stringOption(parsed, 'older-than')}'`);
    }
    if (!config.amqp.url || !config.database.url) {
      return missingSetting(
        'replay',
        'DATABASE_URL and AMQP_URL to the PostgreSQL and RabbitMQ the services use',
        'With the embedded default (one process), use the admin API instead: POST /v1/actions/{id}/replay.',
      );
    }
    const summary = await replay(config, {
      actionIds: listOption(parsed, 'action'),
      olderThanSeconds: olderThan,
      deadLetters: !booleanOption(parsed, 'no-dead-letters'),
    });
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    return 0;
  });
}

async function runDecisionReplay(config: TrellisConfig, parsed: ParsedCommand): Promise<number> {
  const others = ['action', 'older-than', 'no-dead-letters'].filter((name) => parsed.values[name] !== undefined);
  if (others.length) throw new UsageError(`--decisions does not go with ${others.map((o) => `--${o}`).join(', ')}`);
  const logger = createLogger('trellis-replay', config.logLevel);
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, config.engine.plugins);
  const database = await openDatabase(config.database, logger);
  try {
    const report = await replayDecisions(database.dataSource, registry, { since: stringOption(parsed, 'since') });
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    return report.differing.length ? 1 : 0;
  } finally {
    await database.close();
  }
}

export interface ReplaySummary {
  actions: Array<{ id: string; action: string; status: string; why: string }>;
  /** messages republished per consumer queue */
  dead_letters: Record<string, number>;
  /** every dead-lettered message looked at, republished or skipped (and why) */
  messages: ReplayedMessage[];
}

export async function replay(
  config: TrellisConfig,
  options: { actionIds: string[]; olderThanSeconds: number; deadLetters: boolean },
): Promise<ReplaySummary> {
  const logger = createLogger('trellis-replay', config.logLevel);
  const database = await openDatabase(config.database, logger);
  const bus = createMessageBus({ url: config.amqp.url, deliveryLimit: config.amqp.deliveryLimit, maxMessageBytes: config.amqp.maxMessageBytes }, logger);
  try {
    await bus.start();
    const stuck = await replayStuckActions(
      database.dataSource,
      { actionIds: options.actionIds, olderThanSeconds: options.olderThanSeconds },
      'replay',
    );
    await drainOutbox(database.dataSource, bus);
    const messages = options.deadLetters ? await replayDeadLetters(bus, { actionIds: options.actionIds }) : [];
    return {
      actions: stuck.map(({ id, action, status, why }) => ({ id, action, status, why })),
      dead_letters: options.deadLetters ? countRepublished(messages) : {},
      messages,
    };
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
