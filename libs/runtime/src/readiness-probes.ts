import { Queues } from '@trellis/contracts';
import { BrokerUnavailableError, type MessageBus } from '@trellis/messaging';
import { PROBE_TIMEOUT_MS, type ReadinessProbe } from '@trellis/observability';
import { isDatabaseUnavailable, sqlState } from '@trellis/persistence';
import type { DataSource } from 'typeorm';

/** `unavailable (ECONNREFUSED)`, `unavailable (Connection terminated unexpectedly)`, `error 28P01`… */
export function databaseReason(e: unknown): string {
  const code = sqlState(e);
  if (isDatabaseUnavailable(e)) return `unavailable (${code ?? (e instanceof Error ? e.message : String(e))})`;
  return code ? `error ${code}` : 'error';
}

/** The database answers `SELECT 1`. */
export function databaseProbe(dataSource: DataSource): ReadinessProbe {
  return {
    name: 'database',
    check: async () => {
      try {
        await dataSource.query('SELECT 1');
      } catch (e) {
        throw new Error(databaseReason(e));
      }
    },
  };
}

/** The broker answers: a queue of the topology can be looked at (RabbitMQ: a channel and a queue check). */
export function brokerProbe(bus: MessageBus): ReadinessProbe {
  return {
    name: 'broker',
    check: async () => {
      try {
        await bus.depth(Queues.engineActions);
      } catch (e) {
        throw new Error(e instanceof BrokerUnavailableError ? 'unavailable (connection lost)' : `error (${e instanceof Error ? e.name : 'unknown'})`);
      }
    },
  };
}

/** The cloud answers: Keystone's version document (KeystoneSession.ping). */
export function cloudProbe(keystone: { ping(timeoutMs: number): Promise<void> }): ReadinessProbe {
  return { name: 'cloud', check: () => keystone.ping(PROBE_TIMEOUT_MS) };
}
