import { isDomainError } from '@trellis/common';
import { ContractViolation } from '@trellis/contracts';
import { errorMessage } from './bus-errors';
import type { HandlerOutcome } from './bus.port';

export type ErrorToOutcome = (error: unknown) => HandlerOutcome;

/**
 * The one place a consumer's failure becomes an ack decision: a message that can never succeed
 * (it breaks its contract, or a permanent domain error) is dead-lettered at once with the reason;
 * a transient domain error or anything unexpected (a lost database connection, a bug) is retried
 * and reaches the dead-letter queue through the delivery limit if it keeps failing.
 */
export const defaultErrorToOutcome: ErrorToOutcome = (error) => {
  if (error instanceof ContractViolation) return { kind: 'dead-letter', reason: error.message, reasonClass: 'invalid' };
  if (isDomainError(error)) {
    const reason = `${error.code}: ${error.message}`;
    return error.transient ? { kind: 'retry', reason, reasonClass: 'transient' } : { kind: 'dead-letter', reason, reasonClass: 'rejected' };
  }
  return { kind: 'retry', reason: errorMessage(error), reasonClass: 'unexpected' };
};
