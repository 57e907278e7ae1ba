import type { INestApplication, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@trellis/common';
import { contextOf, REQUEST_ID_HEADER } from './core/request-context.middleware';
import { writeError } from './core/senlin-exception.filter';
import type { HttpRequest, HttpResponse, NextFn } from './core/http.types';
import { GatewayModule, gatewayLogger, type GatewayDeps } from './gateway.module';
import { setupOpenApi } from './openapi/openapi';

/** Senlin's max_json_body_size default. */
const MAX_BODY = 1024 * 1024;

/** Senlin serialised JSON with sorted keys; clients diffing responses rely on stable output. */
function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value as object).sort()) sorted[k] = (value as Record<string, unknown>)[k];
  return sorted;
}

/**
 * What an app built from GatewayModule needs besides the module: a JSON body parser whose errors
 * become Senlin error bodies, sorted JSON keys and the OpenAPI document. Call before `init()`.
 */
export function configureGatewayApp(app: NestExpressApplication, deps: GatewayDeps): void {
  const logger = gatewayLogger(deps);
  app.disable('x-powered-by');
  app.set('json replacer', sortKeys);
  // Every body is read as JSON whatever its Content-Type, as Senlin's deserializer did.
  app.useBodyParser('json', { limit: MAX_BODY, strict: false, type: () => true });
  app.use((err: unknown, req: HttpRequest, res: HttpResponse, next: NextFn) => {
    if (!err) return next();
    const ctx = contextOf(req, deps.config.http.publicUrl);
    res.setHeader(REQUEST_ID_HEADER, ctx.requestId);
    writeError(err, req, res, logger);
  });
  setupOpenApi(app);
}

export interface RunningGateway {
  app: INestApplication;
  /** `http://host:port` the gateway listens on */
  url: string;
  close(): Promise<void>;
}

/** Starts the gateway on config.http.host:port (port 0 picks a free one). */
export async function startGateway(deps: GatewayDeps): Promise<RunningGateway> {
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
  logger.info('gateway listening', { url });
  return { app, url, close: () => app.close() };
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
