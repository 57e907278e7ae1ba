import { NestFactory } from '@nestjs/core';
import { WorkerModule, type WorkerDeps } from './worker.module';

export interface RunningWorker {
  close(): Promise<void>;
}

/** Starts the nova-worker on the given database, bus and Nova client. */
export async function startNovaWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(deps), { logger: false });
  await app.init();
  return { close: () => app.close() };
}
