import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PolicyRegistry } from '@trellis/policies';
import { loadPolicyPlugins } from './policy-plugins';

describe('loadPolicyPlugins', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-plugins-'));
  const framework = path.resolve(__dirname, '../../policies/src/framework/policy');
  const schema = path.resolve(__dirname, '../../policies/src/schema/schema');
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

describe('bundled plugins', () => {
  it('`bundled` loads role anti-affinity beside the built-ins, from the plugins folder', () => {
    const registry = PolicyRegistry.withBuiltins();
    expect(loadPolicyPlugins(registry, ['bundled'])).toEqual(['trellis.policy.role_anti_affinity-1.0']);
    expect(registry.list().map((t) => t.typeName)).toContain('trellis.policy.role_anti_affinity-1.0');
  });

  it('`none` loads nothing, and cannot be combined', () => {
    expect(loadPolicyPlugins(PolicyRegistry.withBuiltins(), ['none'])).toEqual([]);
    expect(() => loadPolicyPlugins(PolicyRegistry.withBuiltins(), ['none', 'bundled'])).toThrow(
      "TRELLIS_POLICY_PLUGINS: 'none' loads no plugin and cannot be combined with others (none,bundled)",
    );
  });
});
