import { NestFactory } from '@nestjs/core';
import { Queues } from '@trellis/contracts';
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
  const heartbeat = await startHeartbeatOrClose(app, deps.dataSource, { binary: 'trellis-nova-worker', topic: Queues.workerOrders }, deps.logger);
  return {
    close: async () => {
      await heartbeat.stop();
      await app.close();
    },
  };
}
