import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Exchanges, Queues, RoutingKeys } from '@trellis/contracts';
import type { ConsumerHandle } from '@trellis/messaging';
import { onOutboxSetAside, untilDatabaseAnswers } from '@trellis/persistence';
import type { PolicyRegistry } from '@trellis/policies';
import { createEvaluator } from '@trellis/decisions';
import { RunActionUseCase } from './actions/run-action.usecase';
import { EngineHandlers } from './messages/engine.handlers';
import { ApplyWorkResultUseCase } from './results/apply-work-result.usecase';
import { ResumeService } from './resume/resume.service';
import { DeadlineSupervisor } from './deadline/deadline-supervisor';
import { DriftCoordinator } from './drift/drift-coordinator';
import { DriftScheduler } from './drift/drift-scheduler';
import { RetentionJob } from './retention/retention-job';
import { timedEvaluator } from './actions/timed-evaluator';
import { WorkOrderVersions } from './actions/work-order-versions';
import type { ServiceDeps } from '@trellis/runtime';

export interface EngineDeps extends ServiceDeps {
  registry: PolicyRegistry;
}

const DEPS = Symbol('ENGINE_DEPS');

/** Starts the consumers and the resume loop with the application, and stops them with it. */
@Injectable()
export class EngineRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumers: ConsumerHandle[] = [];
  private unlisten: (() => void) | null = null;

  constructor(
    @Inject(DEPS) private readonly deps: EngineDeps,
    private readonly handlers: EngineHandlers,
    private readonly resume: ResumeService,
    private readonly driftScheduler: DriftScheduler,
    private readonly deadlines: DeadlineSupervisor,
    private readonly retention: RetentionJob,
    private readonly workOrderVersions: WorkOrderVersions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { bus, config } = this.deps;
    const prefetch = config.amqp.prefetch;
    // which work order versions the nova-workers take, before the first order is written
    await this.workOrderVersions.start();
    this.consumers.push(await bus.consume(Queues.engineResults, (m) => this.handlers.onWorkResult(m), { prefetch }));
    this.consumers.push(await bus.consume(Queues.engineActions, (m) => this.handlers.onActionRequested(m), { prefetch }));
    await this.resume.start();
    this.deadlines.start();
    // a work order this process's relay set aside fails its action now, not at the next look
    this.unlisten = onOutboxSetAside(this.deps.dataSource, (rows) => {
      if (rows.some((r) => r.exchange === Exchanges.work && r.routingKey === RoutingKeys.workOrder)) this.deadlines.kick();
    });
    this.driftScheduler.start();
    this.retention.start();
    this.deps.logger.info('policy-engine consuming', { queues: [Queues.engineActions, Queues.engineResults], prefetch });
  }

  async onApplicationShutdown(): Promise<void> {
    this.resume.stop();
    this.workOrderVersions.stop();
    this.unlisten?.();
    await this.deadlines.stop();
    await this.retention.stop();
    await this.driftScheduler.stop();
    for (const c of this.consumers.splice(0)) await c.cancel();
  }
}

@Module({})
export class EngineModule {
  static forRoot(deps: EngineDeps): DynamicModule {
    const evaluator = timedEvaluator(createEvaluator(deps.registry, { maxNodesPerCluster: deps.config.limits.maxNodesPerCluster }));
    const log = deps.logger;
    const workOrderVersions = new WorkOrderVersions(deps.dataSource, log.child({ component: 'work-order-versions' }));
    const drift = new DriftCoordinator(evaluator, log.child({ component: 'drift' }), {
      instanceId: deps.config.instanceId,
      leaseSeconds: deps.config.engine.leaseSeconds,
      buildTimeoutSeconds: deps.config.worker.buildTimeoutSeconds,
      workOrderVersions,
    });
    return {
      module: EngineModule,
      providers: [
        { provide: DEPS, useValue: deps },
        { provide: WorkOrderVersions, useValue: workOrderVersions },
        {
          provide: RunActionUseCase,
          useFactory: () =>
            new RunActionUseCase(deps.dataSource, evaluator, log, {
              instanceId: deps.config.instanceId,
              leaseSeconds: deps.config.engine.leaseSeconds,
              buildTimeoutSeconds: deps.config.worker.buildTimeoutSeconds,
              drift,
              workOrderVersions,
            }),
        },
        {
          provide: ApplyWorkResultUseCase,
          useFactory: () => new ApplyWorkResultUseCase(deps.dataSource, evaluator, log, drift),
        },
        {
          provide: DriftScheduler,
          useFactory: () =>
            new DriftScheduler(deps.dataSource, log.child({ component: 'drift-scheduler' }), {
              intervalSeconds: deps.config.engine.driftIntervalSeconds,
              driftAwareTypes: evaluator.driftAwareTypes(),
            }),
        },
        {
          provide: EngineHandlers,
          useFactory: (run: RunActionUseCase, apply: ApplyWorkResultUseCase) =>
            new EngineHandlers(run, apply, log, () => untilDatabaseAnswers(deps.dataSource)),
          inject: [RunActionUseCase, ApplyWorkResultUseCase],
        },
        {
          provide: ResumeService,
          useFactory: () =>
            new ResumeService(deps.dataSource, log, {
              leaseSeconds: deps.config.engine.leaseSeconds,
              intervalSeconds: deps.config.engine.resumeIntervalSeconds,
            }),
        },
        {
          provide: DeadlineSupervisor,
          // as often as the resume loop: an action fails at most one interval after its timeout
          useFactory: () =>
            new DeadlineSupervisor(deps.dataSource, log.child({ component: 'deadlines' }), {
              intervalSeconds: deps.config.engine.resumeIntervalSeconds,
            }),
        },
        {
          provide: RetentionJob,
          useFactory: () => new RetentionJob(deps.dataSource, log.child({ component: 'retention' }), deps.config.retention),
        },
        EngineRunner,
      ],
      exports: [RunActionUseCase, WorkOrderVersions],
    };
  }
}
