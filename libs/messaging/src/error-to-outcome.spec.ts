import { DomainError } from '@trellis/common';
import { ContractViolation } from '@trellis/contracts';
import { defaultErrorToOutcome, errorToOutcome } from './error-to-outcome';

class Gone extends Error {}
class DatabaseDown extends Error {}

describe('errorToOutcome: the one mapping from a consumer error to ack / retry / dead-letter', () => {
  const permanentDomain = new DomainError('NOT_FOUND', 'cluster c1 not found');
  const transientDomain = new DomainError('UNAVAILABLE', 'try later');

  it.each([
    ['a contract violation', new ContractViolation('ActionRequested', ['cluster_id must be a string']), 'dead-letter', 'invalid'],
    ['a permanent domain error', permanentDomain, 'dead-letter', 'rejected'],
    ['a transient domain error', transientDomain, 'retry', 'transient'],
    ['anything else', new Error('socket hang up'), 'retry', 'unexpected'],
  ])('by default: %s → %s (%s), with the error message as the reason', (_what, error, kind, reasonClass) => {
    expect(defaultErrorToOutcome(error)).toEqual({ kind, reasonClass, reason: (error as Error).message });
  });

  it("dead-letters what the consumer's rules call permanent, and retries what they call transient as 'transient'", () => {
    const rules = { permanent: (e: unknown) => e instanceof Gone, transient: (e: unknown) => e instanceof DatabaseDown };
    expect(errorToOutcome(new Gone('action a1 is gone'), rules)).toEqual({ kind: 'dead-letter', reasonClass: 'rejected', reason: 'action a1 is gone' });
    expect(errorToOutcome(new DatabaseDown('terminating connection'), rules)).toEqual({ kind: 'retry', reasonClass: 'transient', reason: 'terminating connection' });
    expect(errorToOutcome(new Error('bug'), rules)).toEqual({ kind: 'retry', reasonClass: 'unexpected', reason: 'bug' });
  });

  it("asks the consumer's transient rule before a domain error's own flag, and never lets a rule turn a contract violation into a retry", () => {
    expect(errorToOutcome(permanentDomain, { transient: () => true })).toMatchObject({ kind: 'retry', reasonClass: 'transient' });
    expect(errorToOutcome(new ContractViolation('ActionRequested', ['x']), { transient: () => true })).toMatchObject({ kind: 'dead-letter', reasonClass: 'invalid' });
  });
});
