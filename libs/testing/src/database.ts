import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { silentLogger, type Logger } from '@trellis/common';
import {
  ALL_MIGRATIONS,
  createPgliteTemplate,
  IN_MEMORY,
  openDatabase,
  redactUrl,
  type Database,
} from '@trellis/persistence';

/** The PostgreSQL the integration tests use when DATABASE_URL is not set. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

let template: Promise<Uint8Array> | null = null;

/**
 * A fresh, migrated in-memory PGlite for a unit test; `close()` it in afterAll/afterEach.
 *
 * Starting PGlite and migrating takes 2-3 s; after the first time the migrated data directory is
 * kept as an archive in the OS temp directory (named by the migrations' contents, so a changed
 * migration makes a new one) and later databases, in any jest worker, load it in about half a second.
 */
export async function openTestDatabase(logger: Logger = silentLogger): Promise<Database> {
  return openDatabase({ url: null, dataDir: IN_MEMORY, poolSize: 1, logging: false }, logger, {
    pgliteTemplate: await migratedPgliteTemplate(logger),
  });
}

/**
 * The migrated in-memory PGlite `openTestDatabase` starts from, as an archive for
 * `openDatabase(..., {pgliteTemplate})` (an embedded Trellis in a test: `startEmbedded`'s
 * `pgliteTemplate`). Made once per set of migrations and kept in the OS temp directory.
 */
export function migratedPgliteTemplate(logger: Logger = silentLogger): Promise<Uint8Array> {
  template ??= loadOrCreateTemplate(logger).catch((e) => {
    template = null;
    throw e;
  });
  return template;
}

/**
 * A migrated database of its own on the integration PostgreSQL (`DATABASE_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`): `trellis_it_<random>`, created here and dropped by
 * `close()`.
 */
export async function openPostgresTestDatabase(
  options: { url?: string; poolSize?: number; logger?: Logger } = {},
): Promise<Database & { url: string; name: string }> {
  const adminUrl = options.url ?? process.env.DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  const name = `trellis_it_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(adminUrl, name);
  let db: Database;
  try {
    db = await openDatabase(
      { url, dataDir: IN_MEMORY, poolSize: options.poolSize ?? 10, logging: false },
      options.logger ?? silentLogger,
    );
  } catch (e) {
    await admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    throw e;
  }
  let closed = false;
  return {
    ...db,
    url,
    name,
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        await admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
  };
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(`integration PostgreSQL not reachable at DATABASE_URL=${redactUrl(url)}: ${(e as Error).message}`);
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function loadOrCreateTemplate(logger: Logger): Promise<Uint8Array> {
  const key = createHash('sha256')
    .update(pgliteVersion())
    .update(ALL_MIGRATIONS.map((m) => `${m.name}\n${m.prototype.up.toString()}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const path = join(tmpdir(), `trellis-pglite-template-${key}.tar.gz`);
  if (existsSync(path)) return new Uint8Array(readFileSync(path));
  const archive = await createPgliteTemplate(logger);
  // another jest worker may be writing the same file: write aside, then rename (atomic)
  const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, archive);
  renameSync(partial, path);
  return archive;
}

/** The package does not export its package.json: read it beside the resolved entry (dist/index.cjs). */
function pgliteVersion(): string {
  const pkg = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}
