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
import type { NovaPort } from '@trellis/nova';
import { BuildPoller } from './builds/build-poller';
import { FactsRefresher } from './facts/facts-refresher';
import { WorkerHandlers } from './messages/worker.handlers';
import { ApplyWorkOrderUseCase } from './orders/apply-work-order.usecase';
import { SurveyClusterUseCase } from './facts/survey-cluster.usecase';
import type { ServiceDeps } from '@trellis/runtime';

export interface WorkerDeps extends ServiceDeps {
  nova: NovaPort;
}

const DEPS = Symbol('WORKER_DEPS');

/**
 * Start order matters: Nova facts are read before the first order is taken (the engine decides on
 * them), and the build poller runs before consumption so builds a dead worker left are resumed.
 */
@Injectable()
export class WorkerRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumer: ConsumerHandle | null = null;

  constructor(
    @Inject(DEPS) private readonly deps: WorkerDeps,
    private readonly handlers: WorkerHandlers,
    private readonly poller: BuildPoller,
    private readonly facts: FactsRefresher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.facts.start();
    this.poller.start();
    this.consumer = await this.deps.bus.consume(Queues.workerOrders, (m) => this.handlers.onWorkOrder(m), {
      prefetch: this.deps.config.amqp.prefetch,
    });
    this.deps.logger.info('nova-worker consuming', { queue: Queues.workerOrders });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.cancel();
    await this.poller.stop();
    await this.facts.stop();
  }
}

@Module({})
export class WorkerModule {
  static forRoot(deps: WorkerDeps): DynamicModule {
    const { config, dataSource, nova, logger } = deps;
    return {
      module: WorkerModule,
      providers: [
        { provide: DEPS, useValue: deps },
        {
          provide: BuildPoller,
          useFactory: () =>
            new BuildPoller(dataSource, nova, logger.child({ component: 'build-poller' }), {
              workerId: config.instanceId,
              pollIntervalMs: config.worker.pollIntervalMs,
              leaseSeconds: config.engine.leaseSeconds,
              concurrency: config.worker.concurrency,
              batchSize: 200,
            }),
        },
        {
          provide: FactsRefresher,
          useFactory: () => new FactsRefresher(dataSource, nova, logger.child({ component: 'facts' }), config.worker.factsRefreshSeconds),
        },
        {
          provide: ApplyWorkOrderUseCase,
          useFactory: () =>
            new ApplyWorkOrderUseCase(dataSource, nova, logger, {
              concurrency: config.worker.concurrency,
              leaseSeconds: config.engine.leaseSeconds,
              pollIntervalMs: config.worker.pollIntervalMs,
            }),
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
                if (order.create_groups.length || order.delete_groups.length) void facts.refresh();
              },
              new SurveyClusterUseCase(dataSource, nova, facts, logger.child({ component: 'survey' })),
            ),
          inject: [ApplyWorkOrderUseCase, BuildPoller, FactsRefresher],
        },
        WorkerRunner,
      ],
    };
  }
}
