import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export interface MachineFacts {
  cpu_model: string;
  /** logical cores as the OS reports them */
  cores: number;
  cpu_mhz: number | null;
  /** cpufreq governor of cpu0 when the kernel exposes it (a VM often does not) */
  cpu_governor: string | null;
  memory_bytes: number;
  memory_gib: number;
  node_version: string;
  v8_version: string;
  os: string;
  os_release: string;
  arch: string;
  /** 1, 5, 15 minute load averages when the run started */
  load_average: number[];
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    cpu_mhz: cpus[0]?.speed || null,
    cpu_governor: readText('/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'),
    memory_bytes: os.totalmem(),
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node_version: process.version,
    v8_version: process.versions.v8,
    os: `${os.type()} ${os.platform()}`,
    os_release: os.release(),
    arch: os.arch(),
    load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export interface PackageVersions {
  project: { name: string; version: string };
  /** every dependency and devDependency: the range package.json asks for and what node_modules holds */
  packages: Record<string, { declared: string; installed: string | null }>;
}

export function packageVersions(root: string): PackageVersions {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const declared = { ...manifest.dependencies, ...manifest.devDependencies };
  const packages: PackageVersions['packages'] = {};
  for (const name of Object.keys(declared).sort()) {
    const installed = readJson(path.join(root, 'node_modules', name, 'package.json'));
    packages[name] = { declared: declared[name], installed: typeof installed?.version === 'string' ? installed.version : null };
  }
  return { project: { name: manifest.name, version: manifest.version }, packages };
}

export interface SourceState {
  commit: string | null;
  /** uncommitted changes in the tree when the figures were taken */
  dirty: boolean | null;
}

/** Read-only git queries; null when git or the repository is not there. */
export function sourceState(root: string): SourceState {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain').length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

/** The directory holding the project's package.json, searched upwards from `from`. */
export function findRoot(from: string): string {
  let dir = path.resolve(from);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'node_modules'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json with node_modules above ${from}`);
    dir = parent;
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

function readJson(file: string): Record<string, unknown> | null {
  const text = readText(file);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
