import { ConsumerQueues, Headers, type QueueSpec } from '@trellis/contracts';
import type { DeadLetter, MessageBus } from '@trellis/messaging';

/** What `trellis replay` did with one dead-lettered message. */
export interface ReplayedMessage {
  queue: string;
  message_id: string | null;
  action_id: string | null;
  type: string | null;
  /** why it had been dead-lettered */
  dead_letter_reason: string;
  outcome: 'republished' | 'skipped';
  /** why it was skipped (it stays in the dead-letter queue) */
  why?: string;
}

export interface DeadLetterReplayOptions {
  /** only messages of these actions; the others stay dead-lettered */
  actionIds: string[];
}

const field = (body: unknown, name: string): string | null => {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : null;
};

/**
 * Moves dead-lettered messages back to the exchange and routing key that feed their queue, each at
 * most once per run. The bus hands out only what each dead-letter queue held when its drain began,
 * so a poison message that its consumer dead-letters again while the run goes on is not taken a
 * second time (it used to be taken, republished and counted again until the run happened to win
 * the race). A second copy of a message already republished in this run is left where it is, as is
 * every message of another action when `actionIds` narrows the run.
 */
export async function replayDeadLetters(
  bus: MessageBus,
  options: DeadLetterReplayOptions,
  queues: readonly QueueSpec[] = ConsumerQueues,
): Promise<ReplayedMessage[]> {
  const report: ReplayedMessage[] = [];
  const republished = new Set<string>();
  const wanted = new Set(options.actionIds);
  for (const spec of queues) {
    await bus.drainDeadLetters(spec.name, Number.MAX_SAFE_INTEGER, async (dead) => {
      const entry = describe(spec, dead);
      const skip =
        wanted.size > 0 && !(entry.action_id && wanted.has(entry.action_id))
          ? 'not a message of an action given with --action'
          : entry.message_id && republished.has(`${spec.name} ${entry.message_id}`)
            ? 'a copy of a message already republished in this run'
            : null;
      if (skip) {
        report.push({ ...entry, outcome: 'skipped', why: `${skip}; left in the dead-letter queue` });
        return 'keep';
      }
      await republish(bus, spec, dead);
      if (entry.message_id) republished.add(`${spec.name} ${entry.message_id}`);
      report.push({ ...entry, outcome: 'republished' });
    });
  }
  return report;
}

/** republished messages per consumer queue (every consumer queue listed, 0 when none) */
export function countRepublished(report: ReplayedMessage[], queues: readonly QueueSpec[] = ConsumerQueues): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(queues.map((q) => [q.name, 0]));
  for (const r of report) if (r.outcome === 'republished') counts[r.queue]++;
  return counts;
}

function describe(spec: QueueSpec, dead: DeadLetter): Omit<ReplayedMessage, 'outcome' | 'why'> {
  const body = dead.message.body;
  return {
    queue: spec.name,
    message_id: dead.message.messageId ?? field(body, 'message_id'),
    action_id: field(body, 'action_id'),
    type: dead.message.type ?? null,
    dead_letter_reason: dead.reason,
  };
}

/** The original message again, without the dead-letter headers, marked with where it came from. */
async function republish(bus: MessageBus, spec: QueueSpec, dead: DeadLetter): Promise<void> {
  const headers: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(dead.message.headers)) {
    if (k === Headers.deadLetterReason || k === Headers.originalQueue || k.startsWith('x-death') || k.startsWith('x-first-death') || k.startsWith('x-last-death')) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') headers[k] = v;
  }
  headers['x-trellis-replayed-from'] = `${dead.queue}: ${dead.reason}`;
  await bus.publish({
    exchange: spec.exchange,
    routingKey: spec.routingKey,
    body: dead.message.body ?? dead.message.raw.toString('utf8'),
    messageId: dead.message.messageId ?? `replayed-${Date.now()}`,
    correlationId: dead.message.correlationId,
    type: dead.message.type,
    headers,
  });
}
