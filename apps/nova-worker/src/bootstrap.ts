import { NestFactory } from '@nestjs/core';
import { Queues, RoutingKeys, ServiceBinaries, WorkOrderMessage, acceptedSchemaVersions } from '@trellis/contracts';
import { startHeartbeatOrClose } from '@trellis/runtime';
import { WorkerModule, type WorkerDeps } from './worker.module';

export interface RunningWorker {
  close(): Promise<void>;
}

/** Starts the nova-worker on the given database, bus and Nova client. */
export async function startNovaWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(deps), { logger: false });
  await app.init();
  // listed by GET /v1/services while it runs
  // the work order versions it takes: the engines write orders in one every worker up takes
  const heartbeat = await startHeartbeatOrClose(
    app,
    deps.dataSource,
    { binary: ServiceBinaries.novaWorker, topic: Queues.workerOrders, accepts: { [RoutingKeys.workOrder]: acceptedSchemaVersions(WorkOrderMessage) } },
    deps.logger,
  );
  return {
    close: async () => {
      await heartbeat.stop();
      await app.close();
    },
  };
}
