import * as fs from 'fs';
import * as path from 'path';
import { EvaluationInput, Policy, PolicyClass, PolicyRegistry, PolicyType, validatePolicySpec } from '@trellis/policies';
import { evaluateAtTestTime as evaluate } from '@trellis/policies/testing/fixed-time';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { newNodeZones } from './plan';

const entry = path.resolve(__dirname, '../index.ts');
const registry = PolicyRegistry.withBuiltins();
const loaded = loadPolicyPlugins(registry, [entry]);

const snapshot = (file: string): EvaluationInput => JSON.parse(fs.readFileSync(path.resolve(__dirname, '../snapshots', file), 'utf8'));
const cap = (max: unknown) => ({ id: 'p-cap', name: 'cap', binding_id: 'b-cap', spec: { type: 'acme.policy.max_per_zone', version: '1.0', properties: { max_nodes: max } } });
const profile = { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: {} } };

describe('loading the example plugin', () => {
  it('registers acme.policy.max_per_zone-1.0 beside the built-ins', () => {
    expect(loaded).toEqual(['acme.policy.max_per_zone-1.0']);
    expect(registry.get('acme.policy.max_per_zone-1.0').meta).toMatchObject({ priority: 350, hooks: ['validate', 'pre_op'] });
  });

  it('refuses to load it twice, naming the type and the class already registered', () => {
    expect(() => loadPolicyPlugins(registry, [entry])).toThrow(
      `Policy plugin ${entry}: Cannot register policy type MaxPerZonePolicy: acme.policy.max_per_zone-1.0 is already registered by MaxPerZonePolicy`,
    );
  });

  it('refuses a class that declares a hook it does not implement', () => {
    @PolicyType({ name: 'acme.policy.forgetful', versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2025.01' }] }, profileTypes: ['ANY'], targets: [], priority: 1, hooks: ['pre_op'], properties: {} })
    class Forgetful extends Policy {}
    expect(() => new PolicyRegistry().register(Forgetful as unknown as PolicyClass)).toThrow(
      "Cannot register policy type Forgetful: it declares the hook 'pre_op' but does not implement preOp()",
    );
  });
});

describe('max_per_zone validate', () => {
  it.each([[0], [-1], [1.5]])('refuses max_nodes %p naming the property', (max) => {
    expect(() => validatePolicySpec(cap(max).spec, { registry, cloud: null })).toThrow(
      expect.objectContaining({ status: 400, path: 'properties.max_nodes', message: `properties.max_nodes: must be a positive integer, not ${max}.` }),
    );
  });

  it('requires max_nodes', () => {
    expect(() => validatePolicySpec({ type: 'acme.policy.max_per_zone', version: '1.0', properties: {} }, { registry, cloud: null })).toThrow(
      expect.objectContaining({ status: 400, message: "properties.max_nodes: Required spec item 'max_nodes' not provided" }),
    );
  });
});

describe('max_per_zone pre_op through evaluate()', () => {
  it('lets a scale-out through when every zone stays within the limit', () => {
    const out = evaluate(snapshot('scale-out-within-limit.json'), { registry });
    expect(out.status).toBe('OK');
    expect(out.trace.map((t) => [t.policy_type, t.verdict, t.reason])).toEqual([
      ['senlin.policy.zone_placement-1.0', 'OK', 'create 2: {"az1":1,"az2":1}'],
      ['acme.policy.max_per_zone-1.0', 'OK', 'az1 2/2, az2 2/2'],
    ]);
    expect(out.plan?.create.map((c) => c.placement.zone)).toEqual(['az1', 'az2']);
  });

  it('refuses a scale-out that would overfill a zone, and the engine creates nothing', () => {
    const out = evaluate(snapshot('scale-out-over-limit.json'), { registry });
    const reason = "zone 'az1' would hold 3 nodes (1 + 2 new), more than max_nodes 2";
    expect(out).toMatchObject({ status: 'ERROR', reason: `Failed policy 'two-per-zone': ${reason}` });
    expect(out.trace[1]).toMatchObject({ policy_type: 'acme.policy.max_per_zone-1.0', verdict: 'ERROR', reason });
    expect(out.plan).toMatchObject({ error: `Policy check failure: Failed policy 'two-per-zone': ${reason}`, create: [], desired_capacity: null });
  });

  it("checks the zone an affinity policy's availability_zone chose", () => {
    const out = evaluate(
      {
        policies: [
          {
            id: 'p-aff',
            name: 'aff',
            binding_id: 'b-aff',
            spec: { type: 'senlin.policy.affinity', version: '1.0', properties: { availability_zone: 'az3' } },
            binding_data: { AffinityPolicy: { version: '1.0', data: { inherited_group: false, servergroup_id: 'g1' } } },
          },
          cap(3),
        ],
        cluster: { id: 'c1', profile, nodes: [1, 2].map((i) => ({ id: `n${i}`, data: { placement: { zone: 'az3' } } })) },
        action: { action: 'NODE_CREATE', target: 'n9' },
      },
      { registry },
    );
    expect(out.status).toBe('OK');
    expect(out.trace[1].reason).toBe('az3 3/3');
    const refused = evaluate(
      {
        policies: [cap(3)],
        cluster: { id: 'c1', profile, nodes: [1, 2, 3].map((i) => ({ id: `n${i}`, data: { placement: { zone: 'az3' } } })) },
        action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 }, data: { placement: { count: 1, placements: [{ zone: 'az3' }] } } },
      },
      { registry },
    );
    expect(refused.reason).toBe("Failed policy 'cap': zone 'az3' would hold 4 nodes (3 + 1 new), more than max_nodes 3");
  });

  it('passes when no policy chose a zone', () => {
    const out = evaluate({ policies: [cap(1)], cluster: { id: 'c1', profile, nodes: [{ id: 'n1', data: { placement: { zone: 'az1' } } }] }, action: { action: 'CLUSTER_SCALE_OUT' } }, { registry });
    expect(out.status).toBe('OK');
    expect(out.trace[0]).toMatchObject({ verdict: 'OK', reason: 'no zone was chosen for new nodes: nothing to check' });
  });

  it('fails, naming the property, on a snapshot whose spec never went through validate', () => {
    const out = evaluate({ policies: [cap(0)], cluster: { id: 'c1', profile }, action: { action: 'CLUSTER_SCALE_OUT' } }, { registry });
    expect(out.reason).toBe("Failed policy 'cap': properties.max_nodes: must be a positive integer, not 0.");
  });

  it('is not checked for a scale-in', () => {
    const out = evaluate({ policies: [cap(1)], cluster: { id: 'c1', profile, nodes: [{ id: 'n1' }] }, action: { action: 'CLUSTER_SCALE_IN' } }, { registry });
    expect(out.trace[0]).toMatchObject({ verdict: 'SKIPPED', reason: 'not checked BEFORE CLUSTER_SCALE_IN' });
  });
});

describe('newNodeZones', () => {
  it.each<[string, Record<string, unknown>, number, Array<string | null>]>([
    ['lays creation.zones out in order', { creation: { count: 3, zones: { b: 1, a: 2 } } }, 3, ['b', 'a', 'a']],
    ["lets an affinity entry's zone win", { creation: { count: 2, zones: { a: 2 } }, placement: { placements: [{ zone: 'x' }, { servergroup: 'g' }] } }, 2, ['x', 'a']],
    ['leaves undecided nodes null', { creation: { count: 2, zones: { a: 1 } } }, 2, ['a', null]],
  ])('%s', (_case, data, count, zones) => expect(newNodeZones(data, count)).toEqual(zones));
});
