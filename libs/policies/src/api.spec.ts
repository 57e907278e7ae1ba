import { describePolicyType, listPolicyTypes, validatePolicySpec } from './api';
import { PolicyRegistry } from './framework/registry';

const registry = PolicyRegistry.withBuiltins();

describe('validatePolicySpec', () => {
  it('normalises the envelope and returns the policy', () => {
    const out = validatePolicySpec({ type: 'senlin.policy.deletion', version: 1, properties: {} }, { cloud: null });
    expect(out.typeName).toBe('senlin.policy.deletion-1.0');
    expect(out.spec).toEqual({ type: 'senlin.policy.deletion', version: '1.0', description: '', properties: {} });
    expect(out.policy.properties).toMatchObject({ criteria: 'RANDOM', destroy_after_deletion: true, hooks: {} });
  });

  it.each([
    [{ type: 'senlin.policy.bogus', version: '1.0', properties: {} }, 404, "The policy_type 'senlin.policy.bogus-1.0' could not be found.", undefined],
    [{ type: 'senlin.policy.affinity', version: 1, properties: {} }, 400, undefined, undefined],
    [{ type: 'senlin.policy.affinity', version: '1', properties: {} }, 404, "The policy_type 'senlin.policy.affinity-1' could not be found.", undefined],
    [{ type: 'senlin.policy.affinity', version: 1, properties: { bogus: 1 } }, 400, "properties.bogus: Unrecognizable spec item 'bogus'", 'properties.bogus'],
    [{ type: 'senlin.policy.scaling', version: 1, properties: { event: 'X' } }, 400, "properties.event: 'X' must be one of the allowed values: CLUSTER_SCALE_IN, CLUSTER_SCALE_OUT", 'properties.event'],
    ['spec', 400, 'The provided spec is not a map.', undefined],
  ])('%p → %p', (spec, status, message, path) => {
    if (message === undefined) {
      expect(() => validatePolicySpec(spec, { cloud: null })).not.toThrow();
      return;
    }
    expect(() => validatePolicySpec(spec, { cloud: null })).toThrow(expect.objectContaining({ status, message, path }));
  });
});

describe('policy types API shapes (senlin-api §3)', () => {
  it('lists names only up to microversion 1.4', () => {
    expect(listPolicyTypes(registry, { microversion14OrBelow: true }).policy_types).toContainEqual({ name: 'senlin.policy.affinity-1.0' });
  });

  it('lists name, version and that version’s status from 1.5', () => {
    const types = listPolicyTypes(registry, { microversion14OrBelow: false }).policy_types;
    expect(types).toHaveLength(5);
    expect(types).toContainEqual({
      name: 'senlin.policy.deletion',
      version: '1.0',
      support_status: { '1.0': [{ status: 'SUPPORTED', since: '2016.04' }] },
    });
  });

  it('describes a type with its rendered schema and whole VERSIONS', () => {
    const { policy_type } = describePolicyType(registry, 'senlin.policy.deletion-1.0', { supportStatus: true });
    expect(Object.keys(policy_type.support_status ?? {})).toEqual(['1.0', '1.1']);
    const affinity = describePolicyType(registry, 'senlin.policy.affinity-1.0', { supportStatus: false }).policy_type;
    expect(affinity.support_status).toBeUndefined();
    expect(affinity.schema.servergroup.schema?.policies).toEqual({
      type: 'String',
      required: false,
      updatable: false,
      description: 'The server group policies.',
      default: 'affinity',
      constraints: [{ type: 'AllowedValues', constraint: ['affinity', 'soft-affinity', 'anti-affinity', 'soft-anti-affinity'] }],
    });
    expect(affinity.schema.enable_drs_extension).toEqual({ type: 'Boolean', required: false, updatable: false, description: 'Enable vSphere DRS extension.', default: false });
  });

  it('answers 404 for a type name without version', () => {
    expect(() => describePolicyType(registry, 'senlin.policy.affinity', { supportStatus: true })).toThrow(
      expect.objectContaining({ status: 404, message: "The policy_type 'senlin.policy.affinity' could not be found." }),
    );
  });
});
