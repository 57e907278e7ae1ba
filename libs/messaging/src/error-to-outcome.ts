import { isDomainError } from '@trellis/common';
import { ContractViolation } from '@trellis/contracts';
import { errorMessage } from './bus-errors';
import type { HandlerOutcome } from './bus.port';

export type ErrorToOutcome = (error: unknown) => HandlerOutcome;

/** What a consumer knows about its own errors beyond contract violations and domain errors. */
export interface OutcomeRules {
  /** errors that can never succeed however often the message is retried: dead-lettered at once */
  permanent?: (error: unknown) => boolean;
  /** errors that pass (the database restarting, Nova's 5xx): retried as 'transient'; asked before a domain error's own flag */
  transient?: (error: unknown) => boolean;
}

/**
 * The one place a consumer's failure becomes an ack decision: a message that can never succeed
 * (it breaks its contract, a permanent domain error, or what the consumer's rules call permanent)
 * is dead-lettered at once with the reason; a transient domain error or anything unexpected (a lost
 * database connection, a bug) is retried and reaches the dead-letter queue through the delivery
 * limit if it keeps failing.
 */
export function errorToOutcome(error: unknown, rules: OutcomeRules = {}): HandlerOutcome {
  const reason = errorMessage(error);
  if (error instanceof ContractViolation) return { kind: 'dead-letter', reason, reasonClass: 'invalid' };
  if (rules.permanent?.(error)) return { kind: 'dead-letter', reason, reasonClass: 'rejected' };
  if (rules.transient?.(error)) return { kind: 'retry', reason, reasonClass: 'transient' };
  if (isDomainError(error)) {
    return error.transient ? { kind: 'retry', reason, reasonClass: 'transient' } : { kind: 'dead-letter', reason, reasonClass: 'rejected' };
  }
  return { kind: 'retry', reason, reasonClass: 'unexpected' };
}

export const defaultErrorToOutcome: ErrorToOutcome = (error) => errorToOutcome(error);
