import { DomainError, conflict, unavailable } from './errors';

describe('DomainError stack traces', () => {
  it('captures none for a refusal or a caller mistake, which is answered and never logged with one', () => {
    const refusal = conflict('The CLUSTER_SCALE_OUT action for target c conflicts with the following action(s): a');
    expect(refusal.stack).toBe('DomainError: The CLUSTER_SCALE_OUT action for target c conflicts with the following action(s): a');
    expect(new DomainError('BAD_REQUEST', 'bad').stack).not.toContain('\n    at ');
  });

  it('keeps one for what is logged as a 5xx, and leaves the limit for every other error as it was', () => {
    const limit = Error.stackTraceLimit;
    expect(unavailable('the database is unavailable').stack).toContain('\n    at ');
    expect(new DomainError('INTERNAL', 'broken').stack).toContain('\n    at ');
    conflict('refused');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('plain').stack).toContain('\n    at ');
  });
});
