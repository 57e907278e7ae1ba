import { CLEANUP_FAILED_NODES_KEY, chooseFailedScaleOutCleanup } from './failed-scale-out';

const deletion = (properties: Record<string, unknown>, over: { enabled?: boolean; binding_id?: string | null; type?: string } = {}) => ({
  name: 'del',
  type: over.type ?? 'senlin.policy.deletion-1.1',
  spec: { type: 'senlin.policy.deletion', version: '1.1', properties },
  enabled: over.enabled ?? true,
  binding_id: over.binding_id === undefined ? 'b1' : over.binding_id,
});

describe('chooseFailedScaleOutCleanup', () => {
  it('keeps the failed nodes when neither the config nor a deletion policy asks (today\'s behaviour)', () => {
    expect(chooseFailedScaleOutCleanup({}, [])).toEqual({ cleanup: false, because: null });
    expect(chooseFailedScaleOutCleanup(null, [])).toEqual({ cleanup: false, because: null });
  });

  it('cleans up for an enabled deletion policy 1.0 or 1.1 with destroy_after_deletion true, given or by default', () => {
    expect(chooseFailedScaleOutCleanup({}, [deletion({ destroy_after_deletion: true })])).toEqual({
      cleanup: true,
      because: "the deletion policy 'del' has destroy_after_deletion true",
    });
    expect(chooseFailedScaleOutCleanup({}, [deletion({}, { type: 'senlin.policy.deletion-1.0' })]).cleanup).toBe(true);
    expect(chooseFailedScaleOutCleanup({}, [deletion({ destroy_after_deletion: 'yes' })]).cleanup).toBe(true);
  });

  it('keeps them for a deletion policy that is disabled, unbound or keeps servers, and for other policy types', () => {
    expect(chooseFailedScaleOutCleanup({}, [deletion({ destroy_after_deletion: false })]).cleanup).toBe(false);
    expect(chooseFailedScaleOutCleanup({}, [deletion({ destroy_after_deletion: 'false' })]).cleanup).toBe(false);
    expect(chooseFailedScaleOutCleanup({}, [deletion({}, { enabled: false })]).cleanup).toBe(false);
    expect(chooseFailedScaleOutCleanup({}, [deletion({}, { binding_id: null })]).cleanup).toBe(false);
    expect(chooseFailedScaleOutCleanup({}, [deletion({}, { type: 'senlin.policy.scaling-1.0' })]).cleanup).toBe(false);
  });

  it('lets the cluster config decide when set: true cleans up without a policy, false keeps despite one', () => {
    expect(chooseFailedScaleOutCleanup({ [CLEANUP_FAILED_NODES_KEY]: true }, [])).toEqual({
      cleanup: true,
      because: "the cluster's config 'cleanup_failed_nodes' is true",
    });
    expect(chooseFailedScaleOutCleanup({ [CLEANUP_FAILED_NODES_KEY]: false }, [deletion({ destroy_after_deletion: true })])).toEqual({
      cleanup: false,
      because: "the cluster's config 'cleanup_failed_nodes' is false",
    });
  });

  it('names the config key and the bad value, and keeps the nodes, when the value is not a boolean', () => {
    const choice = chooseFailedScaleOutCleanup({ [CLEANUP_FAILED_NODES_KEY]: 'yes' }, [deletion({})]);
    expect(choice).toEqual({
      cleanup: false,
      because: null,
      error: `The cluster's config 'cleanup_failed_nodes' must be true or false, not "yes"; the node(s) that failed were kept.`,
    });
  });
});
