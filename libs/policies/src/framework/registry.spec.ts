import { Policy, PolicyClass, PolicyType, PolicyTypeOptions } from './policy';
import { PolicyRegistry } from './registry';

const versions = { '1.0': [{ status: 'EXPERIMENTAL' as const, since: '2024.01' }] };

/** A policy type with no hooks, of `name` and one `version`, declaring `options`. */
function declared(name: string, version: string, options: Partial<PolicyTypeOptions>): PolicyClass {
  @PolicyType({ name, versions: { [version]: versions['1.0'] }, profileTypes: ['ANY'], targets: [], priority: 1, hooks: [], properties: {}, ...options })
  class Declared extends Policy {}
  return Declared as unknown as PolicyClass;
}

describe('PolicyRegistry', () => {
  it('registers the built-ins, one entry per type-version', () => {
    expect(PolicyRegistry.withBuiltins().list().map((t) => t.typeName)).toEqual([
      'senlin.policy.affinity-1.0',
      'senlin.policy.deletion-1.0',
      'senlin.policy.deletion-1.1',
      'senlin.policy.scaling-1.0',
      'senlin.policy.zone_placement-1.0',
    ]);
  });

  it('refuses a duplicate type-version, naming both classes', () => {
    @PolicyType({ name: 'senlin.policy.affinity', versions, profileTypes: ['ANY'], targets: [], priority: 1, hooks: [], properties: {} })
    class MyAffinity extends Policy {}
    expect(() => PolicyRegistry.withBuiltins().register(MyAffinity as unknown as PolicyClass)).toThrow(
      'Cannot register policy type MyAffinity: senlin.policy.affinity-1.0 is already registered by AffinityPolicy',
    );
  });

  it('refuses a declared hook the class does not implement', () => {
    @PolicyType({ name: 'x.lazy', versions, profileTypes: ['ANY'], targets: [], priority: 1, hooks: ['pre_op', 'detach'], properties: {} })
    class Lazy extends Policy {
      override preOp(): void {}
    }
    expect(() => new PolicyRegistry().register(Lazy as unknown as PolicyClass)).toThrow(
      "Cannot register policy type Lazy: it declares the hook 'detach' but does not implement detach()",
    );
  });

  it('refuses an undecorated class', () => {
    class Plain extends Policy {}
    expect(() => new PolicyRegistry().register(Plain as unknown as PolicyClass)).toThrow('Plain: it is not decorated with @PolicyType');
  });

  it("lists the types that never read the hypervisors: the built-ins' and the plugins' that say so", () => {
    const registry = PolicyRegistry.withBuiltins();
    expect(registry.hypervisorFreeTypes()).toEqual(['senlin.policy.deletion', 'senlin.policy.scaling', 'senlin.policy.zone_placement']);
    const declare = (name: string, version: string, readsHypervisors?: boolean) =>
      declared(name, version, readsHypervisors === undefined ? {} : { readsHypervisors });
    registry.register(declare('x.free', '1.0', false)).register(declare('x.silent', '1.0')).register(declare('x.reads', '1.0', true));
    // asked before and after a register: the list is not kept from before it
    expect(registry.hypervisorFreeTypes()).toContain('x.free');
    expect(registry.hypervisorFreeTypes()).not.toContain('x.silent');
    expect(registry.hypervisorFreeTypes()).not.toContain('x.reads');
    // the loader tests the name alone: one version that may read them takes the name out
    registry.register(declare('x.free', '2.0', true));
    expect(registry.hypervisorFreeTypes()).toEqual(['senlin.policy.deletion', 'senlin.policy.scaling', 'senlin.policy.zone_placement']);
  });

  it("lists the types that decide on a summary: the built-ins' and the plugins' that say so", () => {
    const registry = PolicyRegistry.withBuiltins();
    const builtins = ['senlin.policy.affinity', 'senlin.policy.deletion', 'senlin.policy.scaling', 'senlin.policy.zone_placement'];
    expect(registry.summarisedTypes()).toEqual(builtins);
    const declare = (name: string, version: string, summarised?: boolean) => declared(name, version, summarised === undefined ? {} : { summarised });
    registry.register(declare('x.counts', '1.0', true)).register(declare('x.silent', '1.0'));
    expect(registry.summarisedTypes()).toEqual([...builtins, 'x.counts'].sort());
    registry.register(declare('x.counts', '2.0', false));
    expect(registry.summarisedTypes()).toEqual(builtins);
  });

  it('answers 404 text for an unknown type', () => {
    expect(() => PolicyRegistry.withBuiltins().get('senlin.policy.bogus-1.0')).toThrow("The policy_type 'senlin.policy.bogus-1.0' could not be found.");
  });
});
