import { importCycles, layerOf, layerViolations, narrowRuleViolations, readImportGraph, type ImportGraph } from './import-graph';

// The dependency rules of docs/ARCHITECTURE.md ("Who may import whom"), checked on every `npm test`.

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe('the import graph of apps/, libs/, plugins/ and cli/', () => {
  const project = readImportGraph(process.cwd());

  it('is read through the @trellis/* aliases', () => {
    // a lib imported by alias only: if aliases stopped resolving, every rule below would pass vacuously
    const importers = [...project].filter(([, targets]) => targets.includes('libs/contracts/src/index.ts'));
    expect(importers.some(([from]) => from.startsWith('apps/'))).toBe(true);
  });

  it('has no lib importing an app, plugin, bench, cli, example or test file, no app importing another app, no plugin importing past libs', () => {
    expect(layerViolations(project)).toEqual([]);
  });

  it('has no import circle', () => {
    expect(importCycles(project)).toEqual([]);
  });

  it('has the gateway validate tokens through the identity port, and the identity lib below the Nova client', () => {
    expect(narrowRuleViolations(project)).toEqual([]);
  });
});

describe('the rules themselves', () => {
  it('name the layer of a file', () => {
    expect(layerOf('apps/gateway/src/main.ts')).toBe('apps/gateway');
    expect(layerOf('libs/decisions/src/drift/detect-drift.ts')).toBe('libs/decisions');
    expect(layerOf('plugins/role-anti-affinity/index.ts')).toBe('plugins/role-anti-affinity');
    expect(layerOf('cli/trellis.ts')).toBe('cli');
  });

  it('refuse a lib importing a plugin, an app or the cli, and an app importing another app', () => {
    const found = layerViolations(
      graph({
        'libs/decisions/src/a.ts': ['plugins/role-anti-affinity/index.ts', 'libs/policies/src/index.ts'],
        'libs/common/src/b.ts': ['apps/gateway/src/main.ts', 'cli/trellis.ts', 'bench/run.ts'],
        'apps/gateway/src/main.ts': ['apps/nova-simulator/src/main.ts', 'apps/gateway/src/app.module.ts', 'libs/nova/src/index.ts'],
        'plugins/x/index.ts': ['apps/gateway/src/main.ts', 'libs/policies/src/index.ts'],
        'cli/trellis.ts': ['apps/gateway/src/main.ts', 'libs/runtime/src/index.ts'],
      }),
    );
    expect(found.map((v) => `${v.from} -> ${v.to}`)).toEqual([
      'libs/decisions/src/a.ts -> plugins/role-anti-affinity/index.ts',
      'libs/common/src/b.ts -> apps/gateway/src/main.ts',
      'libs/common/src/b.ts -> cli/trellis.ts',
      'libs/common/src/b.ts -> bench/run.ts',
      'apps/gateway/src/main.ts -> apps/nova-simulator/src/main.ts',
      'plugins/x/index.ts -> apps/gateway/src/main.ts',
    ]);
  });

  it('keep the gateway off the Nova client but for the cloud catalog, and the identity lib off libs/nova, specs aside', () => {
    const found = narrowRuleViolations(
      graph({
        'apps/gateway/src/main.ts': ['libs/nova/src/index.ts', 'libs/nova/src/cloud-catalog.ts', 'libs/identity/src/index.ts'],
        'apps/gateway/src/profiles/profiles.spec.ts': ['libs/nova/src/index.ts'],
        'apps/nova-worker/src/main.ts': ['libs/nova/src/index.ts'],
        'libs/identity/src/keystone/session.ts': ['libs/nova/src/nova-http.client.ts'],
        'libs/identity/src/keystone/session.spec.ts': ['libs/nova/src/testing/fake-openstack.ts'],
        'libs/nova/src/nova-http.client.ts': ['libs/identity/src/index.ts'],
      }),
    );
    expect(found.map((v) => `${v.from} -> ${v.to}`)).toEqual([
      'apps/gateway/src/main.ts -> libs/nova/src/index.ts',
      'libs/identity/src/keystone/session.ts -> libs/nova/src/nova-http.client.ts',
    ]);
  });

  it('find every circle, of two files, of three, and a file importing itself, and nothing in a tree', () => {
    const cycles = importCycles(
      graph({
        a: ['b'],
        b: ['a', 'c'],
        c: ['d'],
        d: ['e'],
        e: ['c'],
        f: ['f'],
        g: ['a', 'h'],
        h: [],
      }),
    );
    expect(cycles).toEqual(expect.arrayContaining([['a', 'b'], ['c', 'd', 'e'], ['f']]));
    expect(cycles).toHaveLength(3);
  });
});
