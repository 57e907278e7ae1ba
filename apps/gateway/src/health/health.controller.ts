import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MetricsController, ProbesController } from '@trellis/observability';
import { PublicRoute } from '../core/api.guard';

/**
 * `/healthz` and `/readyz` on the API port, without a token, for load balancers and orchestrators
 * (libs/observability: terminus runs the probes; the gateway's are the database and the broker).
 * `/readyz` answers 503 with `Retry-After` and the failing part while, e.g., PostgreSQL is down.
 */
@ApiExcludeController()
@Controller()
@PublicRoute()
export class HealthController extends ProbesController {}

/** `/metrics` on the API port, without a token, unless TRELLIS_OPS_PORT moves it or TRELLIS_METRICS=false. */
@ApiExcludeController()
@Controller()
@PublicRoute()
export class GatewayMetricsController extends MetricsController {}
