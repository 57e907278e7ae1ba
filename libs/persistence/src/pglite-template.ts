import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ALL_MIGRATIONS } from './migrations';

/**
 * A prepared PGlite data directory: initdb and the migrations already run, made once at build time
 * (`npm run build` runs `dist/cli/pglite-template.js`) and copied into an empty data directory at
 * first start. initdb in PGlite starts a second PGlite and a WebAssembly initdb beside the first:
 * about 850 MB resident, which a process never gives back, and 8-15 s here. Copying ~40 MB of files
 * takes a fraction of a second, and the process starts as small as it does on a restart.
 */

/** What the template was made with, beside its files; a template for another PGlite is not used. */
export const TEMPLATE_MANIFEST = 'trellis-template.json';

export interface PgliteTemplateManifest {
  /** the @electric-sql/pglite version that made it: its data directory format */
  pglite: string;
  /** migrations applied (newer ones run after the copy) */
  migrations: string[];
  /** of the migrations' code: a build with changed migrations makes a new template */
  migrations_digest: string;
  created_at: string;
}

/** The installed @electric-sql/pglite's version (its package.json is not exported to require). */
export function installedPgliteVersion(): string {
  // the entry is <package>/dist/index.cjs
  const pkg = join(dirname(dirname(require.resolve('@electric-sql/pglite'))), 'package.json');
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

export function migrationsDigest(): string {
  return createHash('sha256')
    .update(ALL_MIGRATIONS.map((m) => `${m.name}\n${m.prototype.up.toString()}`).join('\n'))
    .digest('hex');
}

export function readTemplateManifest(templateDir: string): PgliteTemplateManifest | null {
  try {
    return JSON.parse(readFileSync(join(templateDir, TEMPLATE_MANIFEST), 'utf8')) as PgliteTemplateManifest;
  } catch {
    return null;
  }
}

/** Why `templateDir` cannot be used, or null when it can. */
export function unusableTemplate(templateDir: string): string | null {
  const manifest = readTemplateManifest(templateDir);
  if (manifest === null) return `no readable ${TEMPLATE_MANIFEST} in ${templateDir}`;
  if (!existsSync(join(templateDir, 'PG_VERSION'))) return `${templateDir} holds no PostgreSQL data directory`;
  const installed = installedPgliteVersion();
  if (manifest.pglite !== installed) return `the template was made by PGlite ${manifest.pglite}, this is ${installed} (npm run build makes a new one)`;
  return null;
}

/**
 * Copies the template's files into `dataDir`, which holds no database (no PG_VERSION; other files of
 * ours may be there). PG_VERSION goes last: a copy cut short leaves none, so the next start copies
 * again over what it left.
 */
export function copyPgliteTemplate(templateDir: string, dataDir: string): void {
  const entries = readdirSync(templateDir).filter((e) => e !== TEMPLATE_MANIFEST && e !== 'PG_VERSION');
  for (const entry of entries) cpSync(join(templateDir, entry), join(dataDir, entry), { recursive: true, force: true });
  cpSync(join(templateDir, 'PG_VERSION'), join(dataDir, 'PG_VERSION'));
}

/**
 * Makes `templateDir` from a data directory that `prepare` fills (initdb and migrations) in a
 * scratch directory beside it, then moves it into place whole, so a build cut short leaves either
 * the old template or none.
 */
export async function writePgliteTemplate(templateDir: string, prepare: (scratchDir: string) => Promise<string[]>): Promise<PgliteTemplateManifest> {
  const scratch = `${templateDir}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  try {
    const migrations = await prepare(scratch);
    const manifest: PgliteTemplateManifest = {
      pglite: installedPgliteVersion(),
      migrations,
      migrations_digest: migrationsDigest(),
      created_at: new Date().toISOString(),
    };
    writeFileSync(join(scratch, TEMPLATE_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    rmSync(templateDir, { recursive: true, force: true });
    renameSync(scratch, templateDir);
    return manifest;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
