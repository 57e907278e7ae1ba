import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Queues } from '@trellis/contracts';
import type { ConsumerHandle } from '@trellis/messaging';
import { untilDatabaseAnswers } from '@trellis/persistence';
import type { NovaPort } from '@trellis/nova';
import { observeCloudFacts } from '@trellis/observability';
import { NovaAccess, type TrustLookup, type TrustedClients } from './identity/nova-access';
import { BuildPoller } from './builds/build-poller';
import { FactsRefresher } from './facts/facts-refresher';
import { WorkerHandlers } from './messages/worker.handlers';
import { ApplyWorkOrderUseCase } from './orders/apply-work-order.usecase';
import { OrderPoller } from './orders/order-poller';
import { SurveyClusterUseCase } from './facts/survey-cluster.usecase';
import type { ServiceDeps } from '@trellis/runtime';

export interface WorkerDeps extends ServiceDeps {
  /** Trellis's own identity: cloud-wide reads only (hypervisors, zones and their hosts) */
  nova: NovaPort;
  /** Nova as a project, with a token scoped to a Keystone trust (libs/nova TrustedNovaPool) */
  trusted: TrustedClients;
  /** Keystone's trusts, read as the service user: a trust is checked before each order is applied */
  trusts: TrustLookup | null;
}

const DEPS = Symbol('WORKER_DEPS');

/**
 * Start order matters: Nova facts are read before the first order is taken (the engine decides on
 * them), and the build poller runs before consumption so builds a dead worker left are resumed.
 */
@Injectable()
export class WorkerRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumer: ConsumerHandle | null = null;

  private unobserveFacts: (() => void) | null = null;

  constructor(
    @Inject(DEPS) private readonly deps: WorkerDeps,
    private readonly handlers: WorkerHandlers,
    private readonly poller: BuildPoller,
    private readonly facts: FactsRefresher,
    private readonly orders: OrderPoller,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unobserveFacts = observeCloudFacts(() => this.facts.factAges());
    await this.facts.start();
    this.poller.start();
    this.orders.start();
    this.consumer = await this.deps.bus.consume(Queues.workerOrders, (m) => this.handlers.onWorkOrder(m), {
      prefetch: this.deps.config.amqp.prefetch,
    });
    this.deps.logger.info('nova-worker consuming', { queue: Queues.workerOrders });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.cancel();
    await this.orders.stop();
    await this.poller.stop();
    await this.facts.stop();
    this.unobserveFacts?.();
  }
}

@Module({})
export class WorkerModule {
  static forRoot(deps: WorkerDeps): DynamicModule {
    const { config, dataSource, nova, logger } = deps;
    const access = new NovaAccess(dataSource, deps.trusted, nova, logger.child({ component: 'nova-access' }), deps.trusts);
    const facts = new FactsRefresher(dataSource, access, logger.child({ component: 'facts' }), config.worker.factsRefreshSeconds);
    return {
      module: WorkerModule,
      providers: [
        { provide: DEPS, useValue: deps },
        {
          provide: BuildPoller,
          useFactory: () =>
            new BuildPoller(
              dataSource,
              access,
              logger.child({ component: 'build-poller' }),
              {
                workerId: config.instanceId,
                pollIntervalMs: config.worker.pollIntervalMs,
                leaseSeconds: config.engine.leaseSeconds,
                concurrency: config.worker.concurrency,
                batchSize: 200,
              },
              (project, server) => facts.hostOf(project, server),
            ),
        },
        {
          provide: FactsRefresher,
          useValue: facts,
        },
        {
          provide: ApplyWorkOrderUseCase,
          useFactory: () =>
            new ApplyWorkOrderUseCase(dataSource, access, logger, {
              concurrency: config.worker.concurrency,
              leaseSeconds: config.engine.leaseSeconds,
              pollIntervalMs: config.worker.pollIntervalMs,
              workerId: config.instanceId,
            }),
        },
        {
          provide: OrderPoller,
          useFactory: (apply: ApplyWorkOrderUseCase, poller: BuildPoller) =>
            new OrderPoller(dataSource, apply, logger.child({ component: 'order-poller' }), {
              // orders wait seconds between tries at the least: no need to look as often as for builds
              intervalMs: Math.max(config.worker.pollIntervalMs, 1000),
              batchSize: 20,
              afterApply: () => poller.kick(),
            }),
          inject: [ApplyWorkOrderUseCase, BuildPoller],
        },
        {
          provide: WorkerHandlers,
          useFactory: (apply: ApplyWorkOrderUseCase, poller: BuildPoller, facts: FactsRefresher) =>
            new WorkerHandlers(
              apply,
              logger,
              (order) => {
                poller.kick();
                // the engine decides on the server groups it knows of: re-read them when this order
                // changed some (the interval and explicit surveys cover everything else)
                if (order.create_groups.length || order.delete_groups.length) {
                  void facts.refreshProject({ project: order.project, user: order.user }).catch(() => undefined);
                }
              },
              new SurveyClusterUseCase(dataSource, access, facts, logger.child({ component: 'survey' }), config.worker.factsRefreshSeconds * 1000),
              () => untilDatabaseAnswers(dataSource),
            ),
          inject: [ApplyWorkOrderUseCase, BuildPoller, FactsRefresher],
        },
        WorkerRunner,
      ],
    };
  }
}
