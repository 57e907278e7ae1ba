import type { Logger as TypeOrmLogger } from 'typeorm';
import { errorMessage, type Logger } from '@trellis/common';

/** A statement for the log: its text, which holds no values (they are bound parameters). */
const statement = (query: string) => query.replace(/\s+/g, ' ').trim();
const count = (parameters: unknown) => (Array.isArray(parameters) ? parameters.length : parameters ? Object.keys(parameters).length : 0);

/**
 * TRELLIS_DB_LOGGING's log: every SQL statement as a JSON line of the service's logger, with the
 * number of its parameters but never their values. Values are what the rows hold: a webhook's
 * credential (its receiver id), whatever a user put in metadata; the log must not copy them.
 */
export class QueryLogger implements TypeOrmLogger {
  constructor(private readonly logger: Logger) {}

  logQuery(query: string, parameters?: unknown): void {
    this.logger.info('query', { sql: statement(query), parameters: count(parameters) });
  }

  logQueryError(error: string | Error, query: string, parameters?: unknown): void {
    this.logger.warn('query failed', { sql: statement(query), parameters: count(parameters), error: typeof error === 'string' ? error : errorMessage(error) });
  }

  logQuerySlow(time: number, query: string, parameters?: unknown): void {
    this.logger.warn('slow query', { sql: statement(query), parameters: count(parameters), ms: time });
  }

  logSchemaBuild(message: string): void {
    this.logger.info(message);
  }

  logMigration(message: string): void {
    this.logger.info(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    if (level === 'warn') this.logger.warn(text);
    else this.logger.info(text);
  }
}
