import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions';
import { ConfigError, createLogger, errorMessage, type Logger, type TrellisConfig } from '@trellis/common';
import { ALL_ENTITIES } from './entities';
import { PendingMigrationsError, migrationStatus, runMigrationsLocked } from './migrate';
import { PgliteWorker } from './pglite-worker';
import {
  copyPgliteTemplate,
  migrationsDigest,
  readTemplateManifest,
  unusableTemplate,
  writePgliteTemplate,
  type PgliteTemplateManifest,
} from './pglite-template';
import { QueryLogger } from './query-logger';
import { usePreparedStatements } from './prepared';
import { usePipelinedBegin } from './transaction';
import { ALL_MIGRATIONS } from './migrations';

export type DatabaseSettings = TrellisConfig['database'];

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  dataSource: DataSource;
  kind: DatabaseKind;
  /** destroys the pool; for PGlite also stops the socket server and closes the database. Idempotent. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /**
   * An archive from `createPgliteTemplate()` to start an in-memory PGlite from, instead of running
   * initdb and the migrations again (about two seconds less per test database).
   */
  pgliteTemplate?: Uint8Array;
  /**
   * A prepared data directory (`buildPgliteTemplateDir()`) to copy into an empty `dataDir` instead of
   * running initdb; when it is missing or was made by another PGlite, initdb runs as without it.
   */
  pgliteTemplateDir?: string;
  /**
   * PostgreSQL only. 'none': open the database without looking at its migrations (`trellis migrate`
   * does that itself). Default: as `settings.migrateOnStart` says (apply them, or refuse to open
   * while any is pending).
   */
  migrations?: 'none';
}

/** `dataDir` value that keeps PGlite's data in memory (tests). */
export const IN_MEMORY = ':memory:';

/**
 * PGlite runs one statement at a time in one session; pglite-socket 0.2.17 lets several sockets
 * share it through a global queue of protocol messages (`maxConnections`, default 1). The queue
 * keeps a socket's messages together only while that socket has an explicit transaction open (other
 * sockets' messages then wait in the queue until it ends). Outside one, the Parse/Bind/Execute/Sync
 * messages of an extended-protocol query are taken one by one, and when a large query reaches the
 * server in more than one TCP read, another socket's query can run between them and replace the
 * unnamed prepared statement ("bind message supplies 1 parameters, but prepared statement \"\"
 * requires 2": 1 in 30 queries with a 2 MB parameter, against two sockets running small queries,
 * with plain pg clients). Too rare to catch in a test, so the cure is structural: one pooled
 * connection makes it impossible and costs nothing, as PGlite runs one query at a time anyway. The
 * server allows one more socket so a replacement connection is not refused while the old one is
 * still closing.
 */
const PGLITE_POOL_SIZE = 1;
const PGLITE_MAX_SOCKETS = PGLITE_POOL_SIZE + 1;

/**
 * How long a query waits for a pooled connection (and for a new connection to open). Far longer than
 * any queue of short transactions takes; with PGlite a wait this long means work inside a
 * transaction is waiting for a second connection (the only one is its own), which never comes: fail
 * loudly instead of hanging.
 */
const CONNECT_TIMEOUT_MS = 60_000;

const LOCK_FILE = 'trellis.lock';

export async function openDatabase(
  settings: DatabaseSettings,
  logger: Logger = createLogger('persistence'),
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  if (settings.url !== null) {
    if (options.pgliteTemplate) throw new Error('openDatabase: pgliteTemplate is only for PGlite (DATABASE_URL unset)');
    return openPostgres(settings.url, settings, logger, options);
  }
  return openPglite(settings, logger, options);
}

/**
 * Makes the prepared data directory for `OpenDatabaseOptions.pgliteTemplateDir`: a fresh PGlite in
 * `templateDir` with every migration applied.
 */
export async function buildPgliteTemplateDir(
  templateDir: string,
  logger: Logger = createLogger('persistence'),
): Promise<{ manifest: PgliteTemplateManifest; reused: boolean }> {
  // `npm start` builds first: keep a template that this PGlite and these migrations made
  const existing = readTemplateManifest(templateDir);
  if (existing && unusableTemplate(templateDir) === null && existing.migrations_digest === migrationsDigest()) {
    return { manifest: existing, reused: true };
  }
  const manifest = await writePgliteTemplate(resolve(templateDir), async (scratch) => {
    const started = await startPglite(scratch, false, logger, undefined, undefined);
    try {
      return await runMigrationsLocked(started.dataSource, logger);
    } finally {
      await started.close();
    }
  });
  return { manifest, reused: false };
}

/**
 * Starts an in-memory PGlite, applies every migration and returns its data directory as an archive,
 * for `openDatabase(..., {pgliteTemplate})`.
 */
export async function createPgliteTemplate(logger: Logger = createLogger('persistence')): Promise<Uint8Array> {
  const started = await startPglite(IN_MEMORY, false, logger, undefined, undefined);
  try {
    await runMigrationsLocked(started.dataSource, logger);
    await started.dataSource.destroy();
    return await started.worker.dump();
  } finally {
    await started.close();
  }
}

function baseOptions(settings: DatabaseSettings, logger: Logger) {
  return {
    type: 'postgres' as const,
    entities: ALL_ENTITIES,
    migrations: ALL_MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    // TRELLIS_DB_LOGGING: statements into the service's log, without the values bound to them
    ...(settings.logging ? { logging: true as const, logger: new QueryLogger(logger.child({ component: 'sql' })) } : { logging: false as const }),
    applicationName: 'trellis',
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
    poolErrorHandler: (e: unknown) => logger.warn('database connection failed', { error: errorMessage(e) }),
  } satisfies Partial<PostgresDataSourceOptions>;
}

async function openPostgres(url: string, settings: DatabaseSettings, logger: Logger, options: OpenDatabaseOptions): Promise<Database> {
  const shown = redactUrl(url);
  if (!Number.isInteger(settings.poolSize) || settings.poolSize < 1) {
    throw new ConfigError('TRELLIS_DB_POOL_SIZE', `must be a whole number of at least 1, got ${settings.poolSize}`);
  }
  const dataSource = new DataSource({
    ...baseOptions(settings, logger),
    url,
    poolSize: settings.poolSize,
    // Every transaction is READ COMMITTED (inTransaction), whatever the server's default: set once per
    // connection here rather than with a SET TRANSACTION statement (one more round trip) in each.
    extra: {
      options: '-c default_transaction_isolation=read\\ committed',
      // pg's pipeline mode: a query is written before the previous one is answered, which only
      // inTransaction's BEGIN uses (every other caller awaits each statement)
      ...(settings.pipeline !== false ? { pipeline: true } : {}),
    },
  });
  try {
    await dataSource.initialize();
  } catch (e) {
    throw new ConfigError('DATABASE_URL', `names a PostgreSQL that cannot be used (${shown}): ${describeError(e)}`);
  }
  if (options.migrations !== 'none') {
    let pending: string[] = [];
    try {
      if (settings.migrateOnStart === false) pending = (await migrationStatus(dataSource)).pending;
      else await runMigrationsLocked(dataSource, logger);
    } catch (e) {
      await dataSource.destroy().catch(() => undefined);
      throw new Error(`database migrations failed on ${shown}: ${describeError(e)}`, { cause: e });
    }
    if (pending.length > 0) {
      await dataSource.destroy().catch(() => undefined);
      throw new PendingMigrationsError(pending);
    }
  }
  if (settings.preparedStatements !== false) usePreparedStatements(dataSource);
  if (settings.pipeline !== false) usePipelinedBegin(dataSource);
  let closed = false;
  return {
    dataSource,
    kind: 'postgres',
    close: async () => {
      if (closed) return;
      closed = true;
      await dataSource.destroy();
    },
  };
}

async function openPglite(settings: DatabaseSettings, logger: Logger, options: OpenDatabaseOptions): Promise<Database> {
  const template = options.pgliteTemplate;
  if (template && settings.dataDir !== IN_MEMORY) {
    throw new Error(`openDatabase: pgliteTemplate needs an in-memory database, not dataDir '${settings.dataDir}'`);
  }
  const started = await startPglite(settings.dataDir, settings.logging, logger, template, options.pgliteTemplateDir);
  try {
    await runMigrationsLocked(started.dataSource, logger);
  } catch (e) {
    await started.close().catch(() => undefined);
    throw new Error(`database migrations failed on PGlite (${settings.dataDir}): ${describeError(e)}`, { cause: e });
  }
  return { dataSource: started.dataSource, kind: 'pglite', close: started.close };
}

interface StartedPglite {
  worker: PgliteWorker;
  dataSource: DataSource;
  close(): Promise<void>;
}

async function startPglite(
  dataDir: string,
  logging: boolean,
  logger: Logger,
  template: Uint8Array | undefined,
  templateDir: string | undefined,
): Promise<StartedPglite> {
  const t0 = Date.now();
  const dir = dataDir === IN_MEMORY ? null : resolve(dataDir);
  let releaseLock = (): void => undefined;
  let cold = true;
  if (dir !== null) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new ConfigError('TRELLIS_DATA_DIR', `cannot be created (${dir}): ${errorMessage(e)}`);
    }
    cold = !existsSync(join(dir, 'PG_VERSION'));
    releaseLock = lockDataDir(dir);
  }
  let start: 'template' | 'prepared' | 'cold' | 'warm' = template ? 'template' : dir === null || cold ? 'cold' : 'warm';
  if (dir !== null && cold && templateDir !== undefined) {
    const unusable = unusableTemplate(templateDir);
    if (unusable === null) {
      try {
        copyPgliteTemplate(templateDir, dir);
        start = 'prepared';
      } catch (e) {
        releaseLock();
        throw new ConfigError('TRELLIS_DATA_DIR', `cannot take the prepared database (${dir}): ${errorMessage(e)}`);
      }
    } else {
      logger.info('pglite: no prepared data directory, running initdb', { reason: unusable });
    }
  }

  let worker: PgliteWorker;
  try {
    worker = await PgliteWorker.start({
      dataDir: dir,
      template,
      maxConnections: PGLITE_MAX_SOCKETS,
      onUnexpectedExit: (e) => logger.error('pglite stopped unexpectedly', { error: e.message }),
    });
  } catch (e) {
    releaseLock();
    throw dir === null
      ? new Error(`PGlite could not start: ${errorMessage(e)}`, { cause: e })
      : new ConfigError('TRELLIS_DATA_DIR', `holds a database PGlite could not open (${dir}): ${errorMessage(e)}`);
  }

  const dataSource = new DataSource({
    ...baseOptions({ url: null, dataDir, poolSize: PGLITE_POOL_SIZE, logging }, logger),
    host: '127.0.0.1',
    port: worker.port,
    username: 'postgres',
    database: 'postgres',
    poolSize: PGLITE_POOL_SIZE,
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      if (dataSource.isInitialized) await dataSource.destroy();
      await worker.close();
    } finally {
      releaseLock();
    }
  };
  try {
    await dataSource.initialize();
  } catch (e) {
    await close().catch(() => undefined);
    throw new Error(`could not connect to PGlite on 127.0.0.1:${worker.port}: ${describeError(e)}`, { cause: e });
  }
  logger.info('pglite started', {
    dataDir: dir ?? IN_MEMORY,
    start,
    startMs: worker.startMs,
    readyMs: Date.now() - t0,
  });
  return { worker, dataSource, close };
}

/** Data directories this process has open: our own pid in a lock file is no proof of that. */
const openDataDirs = new Set<string>();

/**
 * PGlite keeps no lock of its own: two processes on one data directory would corrupt it. A lock file
 * with our pid stops a second one with a clear message; a lock left by a process that is gone (or by
 * an earlier process that had our pid, as pid 1 in a restarted container) is taken over.
 */
function lockDataDir(dir: string): () => void {
  if (openDataDirs.has(dir)) {
    throw new ConfigError('TRELLIS_DATA_DIR', `is already open in this process (${dir}); share one Database`);
  }
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      openDataDirs.add(dir);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        openDataDirs.delete(dir);
        try {
          unlinkSync(path);
        } catch {
          // already gone: nothing to release
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new ConfigError('TRELLIS_DATA_DIR', `cannot be locked (${path}): ${errorMessage(e)}`);
      }
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new ConfigError(
          'TRELLIS_DATA_DIR',
          `is in use by process ${holder} (${dir}); give each process its own TRELLIS_DATA_DIR or set DATABASE_URL`,
        );
      }
      unlinkSync(path);
    }
  }
  throw new ConfigError('TRELLIS_DATA_DIR', `cannot be locked (${path}): another process keeps taking the lock`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a valid URL)';
  }
}

/** pg reports a refused connection to `localhost` as an AggregateError with an empty message. */
function describeError(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) {
    return e.errors.map((x) => describeError(x)).join('; ');
  }
  const code = (e as { code?: unknown })?.code;
  const message = errorMessage(e) || String((e as object)?.constructor?.name ?? 'unknown error');
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}
