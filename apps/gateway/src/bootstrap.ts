import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@trellis/common';
import { Draining, startOpsServer, type RunningOpsServer } from '@trellis/observability';
import { ServiceHeartbeat } from '@trellis/persistence';
import { Queues, ServiceBinaries } from '@trellis/contracts';
import type { ConsumerHandle } from '@trellis/messaging/bus.port';
import { contextOf, REQUEST_ID_HEADER } from './core/request-context.middleware';
import { answerParserErrors } from './core/parser-errors';
import { MAX_BODY_BYTES } from './core/request-input';
import { writeError } from './core/senlin-exception.filter';
import { sortedJsonBody } from './core/sorted-json';
import type { HttpRequest, HttpResponse, NextFn } from './core/http.types';
import { GatewayModule, gatewayLogger, gatewayProbes, type GatewayDeps } from './gateway.module';
import { setupOpenApi } from './openapi/openapi';
import { RpcServer } from './rpc/rpc-server';

/** RPC requests one gateway handles at once unless GatewayDeps.rpc says otherwise. */
export const DEFAULT_RPC_PREFETCH = 16;

/**
 * What an app built from GatewayModule needs besides the module: a JSON body parser whose errors
 * become Senlin error bodies, sorted JSON keys and the OpenAPI document. Call before `init()`.
 */
export function configureGatewayApp(app: NestExpressApplication, deps: GatewayDeps): void {
  const logger = gatewayLogger(deps);
  app.disable('x-powered-by');
  sortResponseKeys(app);
  // Express 5's default, said here so that no upgrade turns `name[key]=v` into an object behind our
  // back: the parameter stays named `name[key]`, which core/request-input.ts refuses with a 400
  app.set('query parser', 'simple');
  // Every body is read as JSON whatever its Content-Type, as Senlin's deserializer did.
  app.useBodyParser('json', { limit: MAX_BODY_BYTES, strict: false, type: () => true });
  app.use((err: unknown, req: HttpRequest, res: HttpResponse, next: NextFn) => {
    if (!err) return next();
    const ctx = contextOf(req, deps.config.http.publicUrl);
    res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
    writeError(err, req, res, logger);
  });
  answerParserErrors(app.getHttpServer(), logger);
  setupOpenApi(app);
}

/**
 * Every `res.json` (and `res.send` of an object) sends its keys sorted, written by sortedJsonBody
 * rather than by a `json replacer` (see sortedForJson), with the JsonText values of the body (a
 * cluster's node ids) spliced in unparsed. The rest is what Express's `res.json` does with no
 * `json replacer`, `json spaces` or `json escape` set, which the gateway never sets.
 */
function sortResponseKeys(app: NestExpressApplication): void {
  const response = (app.getHttpAdapter().getInstance() as { response: { json(this: ExpressResponse, body: unknown): ExpressResponse } }).response;
  response.json = function (this: ExpressResponse, body: unknown) {
    const json = sortedJsonBody(body);
    const type = this.get('Content-Type');
    // Express 5's `set` makes it `application/json; charset=utf-8`, for bytes as for a string
    if (!type) this.set('Content-Type', 'application/json');
    // a Content-Type set before gets its charset from `send` only with a string
    return this.send(type && typeof json === 'object' ? json.toString('utf8') : json);
  };
}

/** The part of Express's response `res.json` uses. */
interface ExpressResponse {
  get(field: string): string | undefined;
  set(field: string, value: string): ExpressResponse;
  send(body: string | Buffer | undefined): ExpressResponse;
}

export interface RunningGateway {
  app: INestApplication;
  /** `http://host:port` the gateway listens on */
  url: string;
  /** the RPC consumer on `trellis.gateway.rpc`, null when `deps.rpc` is false */
  rpc: ConsumerHandle | null;
  /** `http://host:port` of /healthz, /readyz and /metrics when TRELLIS_OPS_PORT gives them a port of their own */
  opsUrl: string | null;
  close(): Promise<void>;
}

/** Starts the gateway on config.http.host:port (port 0 picks a free one). */
export async function startGateway(gatewayDeps: GatewayDeps): Promise<RunningGateway> {
  const deps: GatewayDeps = { ...gatewayDeps, draining: gatewayDeps.draining ?? new Draining() };
  const logger = gatewayLogger(deps);
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(deps), {
    bodyParser: false,
    logger: nestLogger(logger),
  });
  configureGatewayApp(app, deps);
  await app.listen(deps.config.http.port, deps.config.http.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  let rpc: ConsumerHandle | null = null;
  if (deps.rpc !== false) {
    try {
      rpc = await app.get(RpcServer).serve(deps.bus, { baseUrl: url, prefetch: deps.rpc?.prefetch ?? DEFAULT_RPC_PREFETCH });
    } catch (e) {
      await app.close();
      throw e;
    }
  }
  logger.info('gateway listening', { url, rpc: rpc ? Queues.gatewayRpc : null });
  // listed by GET /v1/services while it runs
  let heartbeat: ServiceHeartbeat;
  let ops: RunningOpsServer | null = null;
  try {
    ops = await startGatewayOps(deps);
    heartbeat = await ServiceHeartbeat.start(deps.dataSource, { binary: ServiceBinaries.gateway, topic: url }, logger);
  } catch (e) {
    await ops?.close();
    await rpc?.cancel();
    await app.close();
    throw e;
  }
  if (ops) logger.info('health and metrics served apart', { url: ops.url });
  const running: RunningGateway = {
    app,
    url,
    rpc,
    opsUrl: ops?.url ?? null,
    close: async () => {
      // A load balancer polling /readyz sees "shutting down" while this gateway still answers, and
      // stops sending to it before it closes (TRELLIS_SHUTDOWN_DRAIN_SECONDS; 0: no wait).
      const drainMs = deps.config.http.shutdownDrainSeconds * 1000;
      deps.draining!.start();
      if (drainMs > 0) {
        logger.info('draining: /readyz answers 503 until the gateway closes', { seconds: deps.config.http.shutdownDrainSeconds });
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      // RPC first: requests already taken finish (and are acked) while the database is still open.
      await running.rpc?.cancel();
      await heartbeat.stop();
      await ops?.close();
      await app.close();
    },
  };
  return running;
}

/**
 * With TRELLIS_OPS_PORT, /healthz, /readyz and /metrics also get a port of their own (and /metrics
 * leaves the API port); in the embedded default that one port serves the whole process.
 */
async function startGatewayOps(deps: GatewayDeps): Promise<RunningOpsServer | null> {
  const { ops } = deps.config;
  if (ops.port === null) return null;
  return startOpsServer({ host: ops.host, port: ops.port, probes: gatewayProbes(deps), metrics: ops.metrics, draining: deps.draining });
}

function nestLogger(logger: Logger): LoggerService {
  const text = (m: unknown) => (typeof m === 'string' ? m : JSON.stringify(m));
  return {
    log: (m) => logger.debug(text(m)),
    error: (m, stack?: string) => logger.error(text(m), stack ? { stack } : undefined),
    warn: (m) => logger.warn(text(m)),
    debug: (m) => logger.debug(text(m)),
    verbose: (m) => logger.debug(text(m)),
  };
}
