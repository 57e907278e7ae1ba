import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { enableProcessMetrics } from '../metrics';
import { MetricsController, ProbesController } from './probes.controller';
import { type Draining, ReadinessModule, type ReadinessProbe } from './readiness';

export interface OpsServerOptions {
  host: string;
  /** 0 picks a free port */
  port: number;
  probes: ReadinessProbe[];
  /** serve /metrics (TRELLIS_METRICS) */
  metrics: boolean;
  /** /readyz answers "shutting down" once this is started (the gateway's drain) */
  draining?: Draining;
}

export interface RunningOpsServer {
  /** `http://host:port` */
  url: string;
  close(): Promise<void>;
}

@Module({})
class OpsModule {
  static forRoot(options: OpsServerOptions): DynamicModule {
    return {
      module: OpsModule,
      imports: [ReadinessModule.forRoot(options.probes, options.draining)],
      controllers: options.metrics ? [ProbesController, MetricsController] : [ProbesController],
    };
  }
}

/**
 * The small HTTP server of a service without an API of its own (the policy-engine, the
 * nova-worker), or of the gateway when TRELLIS_OPS_PORT moves its /metrics off the API port:
 * `/healthz`, `/readyz` and `/metrics`, no token. Bind it to an address only the monitoring reaches.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<RunningOpsServer> {
  if (options.metrics) enableProcessMetrics();
  const app = await NestFactory.create<NestExpressApplication>(OpsModule.forRoot(options), { logger: false });
  app.disable('x-powered-by');
  await app.listen(options.port, options.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, close: () => app.close() };
}
