import { NestFactory } from '@nestjs/core';
import { ActionRequestedMessage, Queues, RoutingKeys, ServiceBinaries, WorkResultMessage, acceptedSchemaVersions } from '@trellis/contracts';
import { startHeartbeatOrClose } from '@trellis/runtime';
import { EngineModule, type EngineDeps } from './engine.module';
import { WorkOrderVersions } from './actions/work-order-versions';

export interface RunningEngine {
  /** the work order schema_version this engine writes, from the nova-workers that are up */
  workOrderVersions: WorkOrderVersions;
  close(): Promise<void>;
}

/** Starts the policy-engine on the given database and bus (alone, or beside the other services). */
export async function startPolicyEngine(deps: EngineDeps): Promise<RunningEngine> {
  const app = await NestFactory.createApplicationContext(EngineModule.forRoot(deps), { logger: false });
  await app.init();
  // listed by GET /v1/services while it runs
  const heartbeat = await startHeartbeatOrClose(app, deps.dataSource, {
    binary: ServiceBinaries.policyEngine,
    topic: Queues.engineActions,
    accepts: { [RoutingKeys.actionRequested]: acceptedSchemaVersions(ActionRequestedMessage), [RoutingKeys.workResult]: acceptedSchemaVersions(WorkResultMessage) },
  }, deps.logger);
  return {
    workOrderVersions: app.get(WorkOrderVersions),
    close: async () => {
      await heartbeat.stop();
      await app.close();
    },
  };
}
