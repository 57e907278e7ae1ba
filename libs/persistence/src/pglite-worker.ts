import { Worker } from 'node:worker_threads';

/**
 * PGlite and its socket server run in a worker thread, for two reasons:
 * - PGlite's CommonJS build loads its WASM with `import()`, which jest's module sandbox refuses
 *   without --experimental-vm-modules; a worker thread is a plain Node context;
 * - PGlite executes each query synchronously, so on the main thread every query would stall the
 *   services' event loop (HTTP, the bus, timers) for its whole duration.
 * The code below is plain JavaScript in a string so that it runs as it is under ts-jest, tsc output
 * and coverage instrumentation alike. It only starts the database, serves it on 127.0.0.1 and answers
 * two requests: `dump` (the data directory as a gzipped tar) and `close`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pgliteEntry);
const { PGLiteSocketServer } = require(workerData.socketEntry);
let db = null;
let server = null;
const send = (message, transfer) => parentPort.postMessage(message, transfer);
const describe = (e) => String((e && e.message) || e);

async function start() {
  const t0 = Date.now();
  const options = { startParams: [...PGlite.defaultStartParams, ...workerData.startParams] };
  db = workerData.template
    ? new PGlite({ ...options, loadDataDir: new Blob([workerData.template]) })
    : workerData.dataDir ? new PGlite(workerData.dataDir, options) : new PGlite(options);
  await db.waitReady;
  const startMs = Date.now() - t0;
  server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: workerData.maxConnections });
  await server.start();
  send({ type: 'ready', port: Number(server.getServerConn().split(':').pop()), startMs });
}

// the pool's sockets close asynchronously; stopping the server first would roll back under them
async function socketsClosed() {
  for (let i = 0; i < 100 && server.getStats().activeConnections > 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

parentPort.on('message', async (request) => {
  try {
    if (request.type === 'dump') {
      const blob = await db.dumpDataDir('gzip');
      const bytes = new Uint8Array(await blob.arrayBuffer());
      send({ type: 'dumped', bytes }, [bytes.buffer]);
    } else if (request.type === 'close') {
      if (server) {
        await socketsClosed();
        await server.stop();
      }
      if (db && !db.closed) await db.close();
      send({ type: 'closed' });
      parentPort.close();
    }
  } catch (e) {
    send({ type: 'failed', request: request.type, message: describe(e) });
  }
});

start().catch((e) => send({ type: 'failed', request: 'start', message: describe(e) }));
`;

/**
 * PostgreSQL settings for PGlite, on top of PGlite's own start parameters. PGlite keeps shared memory
 * and every backend structure inside its WebAssembly memory, which never shrinks, and initdb sizes
 * them for a server (shared_buffers 160 MB): most of the resident memory of a PGlite opening an
 * existing data directory. One session runs one query at a time here, and the
 * operating system's page cache still holds the data files, so a small buffer pool costs little.
 * Measured in BENCHMARKS.md (footprint).
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '8MB',
  temp_buffers: '1MB',
  wal_buffers: '256kB',
  // single-user mode: one backend, whatever pglite-socket multiplexes into it; the arrays sized per
  // connection shrink with this (5-8 MB less at the footprint benchmark's peak)
  max_connections: '4',
  // the shared lock table is max_locks_per_transaction × max_connections slots: 1,024, as many
  // relations and advisory locks as one transaction could want, in a fraction of a megabyte
  max_locks_per_transaction: '256',
};

type Reply =
  | { type: 'ready'; port: number; startMs: number }
  | { type: 'dumped'; bytes: Uint8Array }
  | { type: 'closed' }
  | { type: 'failed'; request: string; message: string };

export interface PgliteWorkerOptions {
  /** absolute path of the data directory, or null for an in-memory database */
  dataDir: string | null;
  /** a data directory archive (from `dump()`) to start an in-memory database from */
  template?: Uint8Array;
  /** sockets the server accepts at once */
  maxConnections: number;
  /** called when the thread ends without close() having been called */
  onUnexpectedExit?: (error: Error) => void;
}

/** A PGlite database served by pglite-socket on 127.0.0.1:`port` from a worker thread. */
export class PgliteWorker {
  private pending: { resolve: (r: Reply) => void; reject: (e: Error) => void } | null = null;
  private exited: Promise<void>;
  private gone: Error | null = null;
  private closing = false;

  private constructor(
    private readonly worker: Worker,
    private readonly onUnexpectedExit: ((error: Error) => void) | undefined,
    readonly port: number,
    /** how long PGlite took to start (initdb or opening the data directory), in ms */
    readonly startMs: number,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  static async start(options: PgliteWorkerOptions): Promise<PgliteWorker> {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        pgliteEntry: require.resolve('@electric-sql/pglite'),
        socketEntry: require.resolve('@electric-sql/pglite-socket'),
        dataDir: options.dataDir,
        template: options.template ?? null,
        maxConnections: options.maxConnections,
        startParams: Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      },
    });
    // only our own listeners may go: Worker keeps internal ones that deliver later messages
    let detach = () => undefined as void;
    const first = await new Promise<Reply>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`PGlite worker exited with code ${code} while starting`));
      worker.on('message', resolve);
      worker.on('error', reject);
      worker.on('exit', onExit);
      detach = () => {
        worker.off('message', resolve);
        worker.off('error', reject);
        worker.off('exit', onExit);
      };
    })
      .catch(async (e: unknown) => {
        await worker.terminate();
        throw e;
      })
      .finally(() => detach());
    if (first.type !== 'ready') {
      await worker.terminate();
      throw new Error(first.type === 'failed' ? first.message : `unexpected reply '${first.type}' from the PGlite worker`);
    }
    const started = new PgliteWorker(worker, options.onUnexpectedExit, first.port, first.startMs);
    started.listen();
    return started;
  }

  /** The data directory as a gzipped tar, for `PgliteWorkerOptions.template`. */
  async dump(): Promise<Uint8Array> {
    const reply = await this.request('dump');
    if (reply.type !== 'dumped') throw new Error(`unexpected reply '${reply.type}' to dump`);
    return reply.bytes;
  }

  /** Stops the socket server, closes the database and ends the thread. Idempotent. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.gone === null) {
      try {
        await this.request('close');
      } finally {
        // a worker that cannot close cleanly still must not outlive its owner
        const timer = setTimeout(() => void this.worker.terminate(), 5_000);
        await this.exited;
        clearTimeout(timer);
      }
    }
    await this.exited;
  }

  private listen(): void {
    this.worker.on('message', (reply: Reply) => {
      const pending = this.pending;
      this.pending = null;
      if (!pending) return;
      if (reply.type === 'failed') pending.reject(new Error(`PGlite ${reply.request} failed: ${reply.message}`));
      else pending.resolve(reply);
    });
    const fail = (e: Error) => {
      if (this.gone === null && !this.closing) this.onUnexpectedExit?.(e);
      this.gone ??= e;
      this.pending?.reject(e);
      this.pending = null;
    };
    this.worker.on('error', (e) => fail(e instanceof Error ? e : new Error(String(e))));
    this.worker.on('exit', (code) => fail(new Error(`PGlite worker exited (code ${code})`)));
  }

  private request(type: 'dump' | 'close'): Promise<Reply> {
    if (this.gone) return Promise.reject(this.gone);
    if (this.pending) return Promise.reject(new Error(`PGlite worker is busy; '${type}' must wait for the previous request`));
    return new Promise<Reply>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ type });
    });
  }
}
