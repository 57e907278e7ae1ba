import { NestFactory } from '@nestjs/core';
import { Queues } from '@trellis/contracts';
import { ServiceHeartbeat } from '@trellis/persistence';
import { WorkerModule, type WorkerDeps } from './worker.module';

export interface RunningWorker {
  close(): Promise<void>;
}

/** Starts the nova-worker on the given database, bus and Nova client. */
export async function startNovaWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(deps), { logger: false });
  await app.init();
  // listed by GET /v1/services while it runs
  let heartbeat: ServiceHeartbeat;
  try {
    heartbeat = await ServiceHeartbeat.start(deps.dataSource, { binary: 'trellis-nova-worker', topic: Queues.workerOrders }, deps.logger);
  } catch (e) {
    // the consumers are running: stop them before the caller tries again or exits
    await app.close();
    throw e;
  }
  return {
    close: async () => {
      await heartbeat.stop();
      await app.close();
    },
  };
}
