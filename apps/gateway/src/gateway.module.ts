import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { createLogger, type CloudCatalog, type Logger, type TrellisConfig } from '@trellis/common';
import { TOKEN_VALIDATOR, type PasswordSignIn, type TokenValidator, type TrustIssuer } from '@trellis/identity';
import type { MessageBus } from '@trellis/messaging/bus.port';
import type { DataSource } from 'typeorm';
import { type Draining, ReadinessModule, type ReadinessProbe } from '@trellis/observability';
import { brokerProbe, databaseProbe } from '@trellis/runtime';
import { ActionSubmitter } from './actions/action-submitter';
import { ActionLimits } from './limits/action-limits';
import { RequestRate } from './limits/request-rate';
import { ActionsController } from './actions/actions.controller';
import { ActionsService } from './actions/actions.service';
import { ClusterActionsService } from './clusters/cluster-actions.service';
import { ClusterPoliciesController } from './clusters/cluster-policies.controller';
import { ClustersController } from './clusters/clusters.controller';
import { ClustersService } from './clusters/clusters.service';
import { ClusterCollectService } from './clusters/cluster-collect.service';
import { loadEnforcer, type PolicyEnforcer } from '@trellis/authz';
import { ApiGuard } from './core/api.guard';
import { PolicyGuard } from './core/policy.guard';
import { DEFAULT_GATEWAY_CONFIG, GATEWAY_CONFIG, type GatewayConfig } from './core/gateway-config';
import { RequestContextMiddleware } from './core/request-context.middleware';
import { RequestInputGuard } from './core/request-input.guard';
import { SenlinExceptionFilter } from './core/senlin-exception.filter';
import { CLOUD_CATALOG, DATA_SOURCE, GATEWAY_LOGGER, MESSAGE_BUS, PASSWORD_SIGN_IN, POLICY_ENFORCER, POLICY_REGISTRY } from './core/tokens';
import { EventsController } from './events/events.controller';
import type { PolicyRegistry } from './infra/policies.adapter';
import { UnitOfWork } from './infra/unit-of-work';
import { NodesController } from './nodes/nodes.controller';
import { NodesService } from './nodes/nodes.service';
import { NodeActionsService } from './nodes/node-actions.service';
import { PoliciesController } from './policies/policies.controller';
import { PoliciesService } from './policies/policies.service';
import { PolicyTypesController } from './policies/policy-types.controller';
import { ProfileTypesController } from './profiles/profile-types.controller';
import { ProfilesController } from './profiles/profiles.controller';
import { ProfileCloudCheck } from './profiles/profile-cloud-check';
import { ProfilesService } from './profiles/profiles.service';
import { RpcServer } from './rpc/rpc-server';
import { VersionsController } from './versions/versions.controller';
import { BuildInfoController } from './build-info/build-info.controller';
import { ServicesController } from './services/services.controller';
import { DecisionsController } from './decisions/decisions.controller';
import { FindingsController } from './findings/findings.controller';
import { GatewayMetricsController, HealthController } from './health/health.controller';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
import { IdempotencyKeyPruner } from './idempotency/idempotency-key-pruner';
import { IdempotentWrites } from './idempotency/idempotent-writes';
import { FindingsService } from './findings/findings.service';
import { DecisionsService } from './decisions/decisions.service';
import { TrustBroker } from './trusts/trust-broker';
import { HostVisibility } from './shared/host-visibility';
import { ReceiversController } from './receivers/receivers.controller';
import { ReceiversService } from './receivers/receivers.service';
import { WebhooksController } from './receivers/webhooks.controller';
import { WebhooksService } from './receivers/webhooks.service';
import { UiController } from './ui/ui.controller';
import { UiSessionController } from './ui/ui-session.controller';

export interface GatewayDeps {
  config: TrellisConfig;
  dataSource: DataSource;
  bus: MessageBus;
  tokenValidator: TokenValidator;
  /** Keystone's OS-TRUST: the gateway makes a trust from each user who starts an action (docs/SECURITY.md) */
  trusts: TrustIssuer;
  /** Glance, Nova and Neutron as the caller sees them: profile specs are checked against them (Senlin's do_validate) */
  cloudCatalog: CloudCatalog;
  /** the web page's password sign-in (Keystone); without it the page at /ui takes a pasted token only */
  signIn?: PasswordSignIn;
  registry: PolicyRegistry;
  /** the API policy; defaults to the rules of config.rbac.policyFile (TRELLIS_POLICY_FILE), read at start */
  enforcer?: PolicyEnforcer;
  /** defaults to a JSON logger at config.logLevel */
  logger?: Logger;
  /** Senlin's limits (defaults are Senlin's: 1000 nodes per cluster, 100 clusters per project, 3600 s) and config.limits overridden */
  limits?: Partial<Omit<GatewayConfig, 'publicUrl'>>;
  /**
   * The RPC transport on `trellis.gateway.rpc` (every REST operation as a message pattern); on by
   * default, `false` for an HTTP-only gateway. `prefetch`: requests handled at once (default 16).
   */
  rpc?: { prefetch?: number } | false;
  /** what /readyz looks at; default the database and the broker (the embedded default adds the cloud) */
  probes?: ReadinessProbe[];
  /** started when the gateway begins to stop: /readyz then answers "shutting down" (startGateway makes it) */
  draining?: Draining;
}

/** Every controller the gateway serves (the route tests enumerate them). */
export const GATEWAY_CONTROLLERS = [
  VersionsController,
  ProfileTypesController,
  ProfilesController,
  PolicyTypesController,
  PoliciesController,
  ClustersController,
  ClusterPoliciesController,
  NodesController,
  ActionsController,
  EventsController,
  DecisionsController,
  FindingsController,
  ReceiversController,
  WebhooksController,
  BuildInfoController,
  ServicesController,
  HealthController,
  // before UiController, whose /ui/:file would otherwise answer GET /ui/session
  UiSessionController,
  UiController,
];

export function gatewayLogger(deps: GatewayDeps): Logger {
  return deps.logger ?? createLogger('gateway', deps.config.logLevel);
}

export function gatewayProbes(deps: GatewayDeps): ReadinessProbe[] {
  return deps.probes ?? [databaseProbe(deps.dataSource), brokerProbe(deps.bus)];
}

/** /metrics is on the API port unless it is turned off or TRELLIS_OPS_PORT gives it a port of its own. */
export const metricsOnApiPort = (config: TrellisConfig): boolean => config.ops.metrics && config.ops.port === null;

@Module({})
export class GatewayModule implements NestModule {
  static forRoot(deps: GatewayDeps): DynamicModule {
    const logger = gatewayLogger(deps);
    const config: GatewayConfig = { ...DEFAULT_GATEWAY_CONFIG, ...deps.config.limits, ...deps.limits, publicUrl: deps.config.http.publicUrl };
    // read here, so that an unknown or broken rule in TRELLIS_POLICY_FILE stops the start naming it
    const enforcer = deps.enforcer ?? loadEnforcer(deps.config.rbac.policyFile);
    const providers: Provider[] = [
      { provide: GATEWAY_CONFIG, useValue: config },
      { provide: TOKEN_VALIDATOR, useValue: deps.tokenValidator },
      { provide: DATA_SOURCE, useValue: deps.dataSource },
      { provide: MESSAGE_BUS, useValue: deps.bus },
      { provide: POLICY_REGISTRY, useValue: deps.registry },
      { provide: GATEWAY_LOGGER, useValue: logger },
      { provide: POLICY_ENFORCER, useValue: enforcer },
      { provide: CLOUD_CATALOG, useValue: deps.cloudCatalog },
      { provide: PASSWORD_SIGN_IN, useValue: deps.signIn ?? null },
      { provide: TrustBroker, useValue: new TrustBroker(deps.trusts, logger.child({ component: 'trusts' })) },
      // global guards run in this order: authenticate, refuse what no route can read (repeated
      // scalar parameters, NUL characters), then check the operation's policy rule
      { provide: APP_GUARD, useClass: ApiGuard },
      { provide: APP_GUARD, useClass: RequestInputGuard },
      { provide: APP_GUARD, useClass: PolicyGuard },
      { provide: APP_FILTER, useFactory: () => new SenlinExceptionFilter(logger) },
      { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
      UnitOfWork,
      IdempotentWrites,
      IdempotencyKeyPruner,
      ActionSubmitter,
      ActionLimits,
      RequestRate,
      HostVisibility,
      DecisionsService,
      FindingsService,
      ProfilesService,
      ProfileCloudCheck,
      ClustersService,
      ClusterActionsService,
      ClusterCollectService,
      NodesService,
      NodeActionsService,
      ActionsService,
      PoliciesService,
      ReceiversService,
      WebhooksService,
      RpcServer,
    ];
    return {
      module: GatewayModule,
      imports: [ReadinessModule.forRoot(gatewayProbes(deps), deps.draining)],
      controllers: metricsOnApiPort(deps.config) ? [...GATEWAY_CONTROLLERS, GatewayMetricsController] : GATEWAY_CONTROLLERS,
      providers,
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
