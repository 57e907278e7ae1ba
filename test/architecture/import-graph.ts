import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';

/**
 * The project's import graph, read with the TypeScript compiler (the same resolution as `tsc`,
 * `@trellis/*` aliases included). Every `import`, `import type`, `export ... from`, `require()` and
 * `import()` with a literal path is an edge: a type-only import still couples the files at compile
 * time, so it counts.
 */
export type ImportGraph = Map<string, string[]>;

/** Top-level folders the dependency rules look at (paths are relative to the repository, with `/`). */
export const SCANNED_ROOTS = ['apps', 'libs', 'plugins', 'cli'] as const;

export function readImportGraph(repo: string, roots: readonly string[] = SCANNED_ROOTS): ImportGraph {
  const options = compilerOptions(repo);
  const host = ts.createCompilerHost(options);
  const graph: ImportGraph = new Map();
  for (const root of roots) {
    for (const file of sourceFiles(join(repo, root))) {
      const imports = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
      const targets = new Set<string>();
      for (const { fileName } of imports) {
        const resolved = ts.resolveModuleName(fileName, file, options, host).resolvedModule;
        if (!resolved || resolved.isExternalLibraryImport) continue;
        const target = toRepoPath(repo, resolved.resolvedFileName);
        if (!target.startsWith('..') && !target.includes('node_modules/')) targets.add(target);
      }
      graph.set(toRepoPath(repo, file), [...targets].sort());
    }
  }
  return graph;
}

function compilerOptions(repo: string): ts.CompilerOptions {
  const path = join(repo, 'tsconfig.json');
  const config = ts.readConfigFile(path, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, repo).options;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

const toRepoPath = (repo: string, file: string) => relative(repo, file).split(sep).join('/');

/** `apps/gateway`, `libs/policies`, `plugins/role-anti-affinity`, `cli`, `bench`, `test`… */
export function layerOf(file: string): string {
  const [top, second] = file.split('/');
  return ['apps', 'libs', 'plugins'].includes(top!) && second ? `${top}/${second}` : top!;
}

export interface RuleViolation {
  rule: string;
  from: string;
  to: string;
}

/**
 * The layering: a lib imports only libs (no app, plugin, bench, cli, example or test code); an app
 * imports libs and its own files, never another app; `cli/` is the composition root and may import
 * the apps. Plugins are held to the libs' rule plus their own folder: they see Trellis only through
 * the public plugin contract in libs.
 */
export function layerViolations(graph: ImportGraph): RuleViolation[] {
  const out: RuleViolation[] = [];
  for (const [from, targets] of graph) {
    const source = layerOf(from);
    for (const to of targets) {
      const target = layerOf(to);
      if (target === source) continue;
      if (source.startsWith('libs/') && !target.startsWith('libs/')) out.push({ rule: 'a lib imports only libs', from, to });
      else if (source.startsWith('apps/') && target.startsWith('apps/')) out.push({ rule: 'an app never imports another app', from, to });
      else if (source.startsWith('plugins/') && !target.startsWith('libs/')) out.push({ rule: 'a plugin imports only libs', from, to });
    }
  }
  return out;
}

/**
 * Rules inside the layering: code that must reach a lib only through a port, or only part of it.
 * Spec files are not held to them (a gateway spec fakes a cloud failure with the Nova client's
 * error; the identity specs share the Nova client's fake OpenStack).
 */
export interface NarrowRule {
  rule: string;
  /** files under this folder */
  from: string;
  /** may not import files under this one */
  to: string;
  /** but these */
  except?: readonly string[];
}

export const NARROW_RULES: readonly NarrowRule[] = [
  {
    rule: 'the gateway knows its callers through the identity port, not the Nova client',
    from: 'apps/gateway/',
    to: 'libs/nova/',
    // profile specs are checked against Glance, Nova flavors and Neutron as the caller
    except: ['libs/nova/src/cloud-catalog.ts'],
  },
  { rule: 'the identity lib is below the Nova client', from: 'libs/identity/', to: 'libs/nova/' },
];

export function narrowRuleViolations(graph: ImportGraph, rules: readonly NarrowRule[] = NARROW_RULES): RuleViolation[] {
  const out: RuleViolation[] = [];
  for (const [from, targets] of graph) {
    if (from.endsWith('.spec.ts')) continue;
    for (const { rule, ...r } of rules) {
      if (!from.startsWith(r.from)) continue;
      for (const to of targets) if (to.startsWith(r.to) && !r.except?.includes(to)) out.push({ rule, from, to });
    }
  }
  return out;
}

/** Every import circle (a strongly connected component of two or more files, or a file importing itself), each sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || edges.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}
