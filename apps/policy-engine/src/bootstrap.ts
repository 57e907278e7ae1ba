import { NestFactory } from '@nestjs/core';
import { Queues } from '@trellis/contracts';
import { startHeartbeatOrClose } from '@trellis/runtime';
import { EngineModule, type EngineDeps } from './engine.module';

export interface RunningEngine {
  close(): Promise<void>;
}

/** Starts the policy-engine on the given database and bus (alone, or beside the other services). */
export async function startPolicyEngine(deps: EngineDeps): Promise<RunningEngine> {
  const app = await NestFactory.createApplicationContext(EngineModule.forRoot(deps), { logger: false });
  await app.init();
  // listed by GET /v1/services while it runs
  const heartbeat = await startHeartbeatOrClose(app, deps.dataSource, { binary: 'trellis-policy-engine', topic: Queues.engineActions }, deps.logger);
  return {
    close: async () => {
      await heartbeat.stop();
      await app.close();
    },
  };
}
