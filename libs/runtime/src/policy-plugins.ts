import * as fs from 'fs';
import * as path from 'path';
import { POLICY_TYPE_META, type PolicyClass, type PolicyRegistry, type PolicyTypeMeta } from '@trellis/policies';

/**
 * The policy types shipped with Trellis as plugins, loaded unless `TRELLIS_POLICY_PLUGINS` says
 * otherwise. They use only the public plugin contract of `@trellis/policies`, as a plugin of your
 * own does (examples/policy-plugin); they are found by path at run time, so no lib imports them.
 */
export const BUNDLED_PLUGINS = ['role-anti-affinity'] as const;

/** `TRELLIS_POLICY_PLUGINS` entries that name the bundled plugins instead of a path or module */
export const BUNDLED = 'bundled';
export const NONE = 'none';

/** <root>/plugins: the repository's in source (ts-jest), dist/plugins once built (libs/runtime/src → up three) */
const PLUGINS_ROOT = path.resolve(__dirname, '../../../plugins');

/**
 * Loads plugin policy types into the registry and returns the `<type>-<version>` names registered.
 * Each specifier is `bundled` (the plugins shipped with Trellis), `none` (nothing; only alone), a
 * module path, a module name or a folder (every `.js` file in it, in name order). A module exports
 * policy classes, or a `policies` array of them. A bad plugin stops the process, naming itself.
 */
export function loadPolicyPlugins(registry: PolicyRegistry, specifiers: readonly string[]): string[] {
  if (specifiers.includes(NONE) && specifiers.length > 1) {
    throw new Error(`TRELLIS_POLICY_PLUGINS: '${NONE}' loads no plugin and cannot be combined with others (${specifiers.join(',')})`);
  }
  const loaded: string[] = [];
  for (const specifier of specifiers) {
    for (const file of pluginFiles(specifier)) loaded.push(...registerModule(registry, file));
  }
  return loaded;
}

function registerModule(registry: PolicyRegistry, file: string): string[] {
  let mod: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require(file) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`Cannot load policy plugin ${file}: ${(e as Error).message}`);
  }
  const classes = Array.isArray(mod.policies)
    ? (mod.policies as unknown[])
    : Object.values(mod).filter((v) => typeof v === 'function' && (v as PolicyClass)[POLICY_TYPE_META]);
  if (classes.length === 0) throw new Error(`Policy plugin ${file} exports no policy type (a @PolicyType class or a 'policies' array)`);
  const names: string[] = [];
  for (const cls of classes) {
    try {
      registry.register(cls as PolicyClass);
    } catch (e) {
      throw new Error(`Policy plugin ${file}: ${(e as Error).message}`);
    }
    const meta = (cls as PolicyClass)[POLICY_TYPE_META] as PolicyTypeMeta;
    for (const version of Object.keys(meta.versions)) names.push(`${meta.name}-${version}`);
  }
  return names;
}

function pluginFiles(specifier: string): string[] {
  if (specifier === NONE) return [];
  if (specifier === BUNDLED) return BUNDLED_PLUGINS.map((name) => bundledEntry(name));
  const resolved = path.resolve(specifier);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(resolved);
  } catch {
    // not a path on disk: let require resolve it as a module name
    return [require.resolve(specifier, { paths: [process.cwd()] })];
  }
  if (!stat.isDirectory()) return [resolved];
  const files = fs
    .readdirSync(resolved)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => path.join(resolved, f));
  // A folder with nothing to load is a mistake (the TypeScript sources, or an unbuilt dist/)
  if (files.length === 0) throw new Error(`Policy plugin folder ${resolved} holds no .js module (is it built?)`);
  return files;
}

/** a bundled plugin's entry module: index.js once built, index.ts when run from source */
function bundledEntry(name: string): string {
  const folder = path.join(PLUGINS_ROOT, name);
  try {
    return require.resolve(folder);
  } catch {
    throw new Error(`The bundled policy plugin '${name}' is missing: no entry module in ${folder} (is Trellis built?)`);
  }
}
