import * as amqp from 'amqplib';
import { ConsumerQueues, deadLetterQueueOf } from '@trellis/contracts';

/** The messages waiting in each consumer queue's dead-letter queue on the broker at `amqpUrl`. */
export async function deadLetterCounts(amqpUrl: string): Promise<Record<string, number>> {
  const conn = await amqp.connect(amqpUrl);
  try {
    const ch = await conn.createChannel();
    const counts: Record<string, number> = {};
    for (const q of ConsumerQueues) counts[deadLetterQueueOf(q.name)] = (await ch.checkQueue(deadLetterQueueOf(q.name))).messageCount;
    return counts;
  } finally {
    await conn.close();
  }
}
