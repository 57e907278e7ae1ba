import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Logger } from '@trellis/common';
import { IN_MEMORY } from '@trellis/persistence';
import { migratedPgliteTemplate } from '@trellis/testing/database';
import { startEmbedded, type Embedded, type EmbeddedOptions } from '../../cli/embedded';
import { ApiClient, keystoneToken } from './api-client';
import { freshDatabase, freshVhost } from './processes';

export interface TestTrellisOptions {
  /** 'embedded': PGlite in memory + in-memory bus; 'rabbitmq+postgres': a fresh database and vhost */
  stack?: 'embedded' | 'rabbitmq+postgres';
  /** a simulator topology (written to a temporary file) */
  topology?: object;
  /** more environment, on top of the test defaults */
  env?: Record<string, string>;
  /** plugin policy types to register */
  policies?: EmbeddedOptions['policies'];
  /** where every service logs (default: JSON lines on stderr at LOG_LEVEL) */
  logger?: Logger;
}

export interface TestTrellis {
  trellis: Embedded;
  close(): Promise<void>;
}

/**
 * Trellis as `npm start` runs it, for a test: free ports, fast builds and polling, quiet logs, and
 * (for the integration tier) its own PostgreSQL database and RabbitMQ vhost, removed on close.
 */
export async function startTestTrellis(options: TestTrellisOptions = {}): Promise<TestTrellis> {
  const env: Record<string, string> = {
    TRELLIS_PORT: '0',
    SIMULATOR_PORT: '0',
    TRELLIS_DATA_DIR: ':memory:',
    SIMULATOR_BUILD_DELAY_MS: '50',
    TRELLIS_POLL_INTERVAL_MS: '50',
    LOG_LEVEL: 'error',
  };
  if (options.topology) {
    const file = join(mkdtempSync(join(tmpdir(), 'trellis-topology-')), 'topology.json');
    writeFileSync(file, JSON.stringify(options.topology));
    env.SIMULATOR_TOPOLOGY_FILE = file;
  }
  const cleanups: Array<() => Promise<void> | void> = [];
  if (options.stack === 'rabbitmq+postgres') {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const vhost = freshVhost();
    cleanups.push(() => vhost.drop());
    env.DATABASE_URL = db.url;
    env.AMQP_URL = vhost.url;
  }
  const config = loadConfig({ ...env, ...options.env });
  // an in-memory PGlite starts from the migrated archive the unit tests share (about 2 s less than
  // initdb and every migration); a data directory (embedded-restart) or PostgreSQL starts as deployed
  const inMemory = config.database.url === null && config.database.dataDir === IN_MEMORY;
  const trellis = await startEmbedded(config, options.logger, {
    ...(options.policies ? { policies: options.policies } : {}),
    ...(inMemory ? { pgliteTemplate: await migratedPgliteTemplate() } : {}),
  });
  return {
    trellis,
    close: async () => {
      await trellis.close();
      for (const c of cleanups.reverse()) await c();
    },
  };
}

/** A client of the built-in simulator's demo user (a member of project demo) on `trellis`. */
export async function demoApi(trellis: Embedded): Promise<ApiClient> {
  if (!trellis.simulator) throw new Error('demoApi: this Trellis has no built-in Nova simulator');
  return new ApiClient(trellis.url, await keystoneToken(trellis.simulator.authUrl, { name: 'demo', password: 'demo', project: 'demo' }));
}
