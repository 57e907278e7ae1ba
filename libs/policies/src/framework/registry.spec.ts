import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Policy, PolicyClass, PolicyType } from './policy';
import { PolicyRegistry, loadPolicyPlugins } from './registry';

const versions = { '1.0': [{ status: 'EXPERIMENTAL' as const, since: '2024.01' }] };

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

  it('answers 404 text for an unknown type', () => {
    expect(() => PolicyRegistry.withBuiltins().get('senlin.policy.bogus-1.0')).toThrow("The policy_type 'senlin.policy.bogus-1.0' could not be found.");
  });
});

describe('loadPolicyPlugins', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-plugins-'));
  const framework = path.resolve(__dirname, 'policy');
  const schema = path.resolve(__dirname, '../schema/schema');
  const plugin = (name: string, hooks: string, body: string) => `
const { Policy, PolicyType } = require(${JSON.stringify(framework)});
const { Schema } = require(${JSON.stringify(schema)});
class ${name} extends Policy { ${body} }
PolicyType({ name: 'acme.policy.${name.toLowerCase()}', versions: { '1.0': [{ status: 'EXPERIMENTAL', since: '2024.01' }] },
  profileTypes: ['ANY'], targets: [['BEFORE', 'CLUSTER_SCALE_OUT']], priority: 250, hooks: ${hooks},
  properties: { label: Schema.String({ default: 'x' }) } })(${name});
`;
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads every .js file of a folder and a `policies` array, and the plugin runs in the chain', () => {
    const folder = path.join(dir, 'ok');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'a.js'), plugin('Tagger', "['pre_op']", 'preOp(ctx) { ctx.action.data.tag = this.properties.label; }') + 'exports.Tagger = Tagger;');
    fs.writeFileSync(path.join(folder, 'b.js'), plugin('Noop', '[]', '') + 'exports.policies = [Noop];');
    fs.writeFileSync(path.join(folder, 'notes.txt'), 'ignored');
    const registry = PolicyRegistry.withBuiltins();
    expect(loadPolicyPlugins(registry, [folder])).toEqual(['acme.policy.tagger-1.0', 'acme.policy.noop-1.0']);
    const policy = registry.create({ type: 'acme.policy.tagger', version: 1, properties: { label: 'blue' } });
    expect(policy.properties).toEqual({ label: 'blue' });
    expect(policy.priority).toBe(250);
  });

  it('names the file and the culprit when a plugin is bad', () => {
    const file = path.join(dir, 'bad.js');
    fs.writeFileSync(file, plugin('Broken', "['post_op']", '') + 'exports.Broken = Broken;');
    expect(() => loadPolicyPlugins(new PolicyRegistry(), [file])).toThrow(
      `Policy plugin ${file}: Cannot register policy type Broken: it declares the hook 'post_op' but does not implement postOp()`,
    );
    const empty = path.join(dir, 'empty.js');
    fs.writeFileSync(empty, 'exports.x = 1;');
    expect(() => loadPolicyPlugins(new PolicyRegistry(), [empty])).toThrow(`Policy plugin ${empty} exports no policy type`);
  });
});
