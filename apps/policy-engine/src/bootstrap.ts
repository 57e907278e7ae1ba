import { NestFactory } from '@nestjs/core';
import { Queues } from '@trellis/contracts';
import { ServiceHeartbeat } from '@trellis/persistence';
import { EngineModule, type EngineDeps } from './engine.module';

export interface RunningEngine {
  close(): Promise<void>;
}

/** Starts the policy-engine on the given database and bus (alone, or beside the other services). */
export async function startPolicyEngine(deps: EngineDeps): Promise<RunningEngine> {
  const app = await NestFactory.createApplicationContext(EngineModule.forRoot(deps), { logger: false });
  await app.init();
  // listed by GET /v1/services while it runs
  let heartbeat: ServiceHeartbeat;
  try {
    heartbeat = await ServiceHeartbeat.start(deps.dataSource, { binary: 'trellis-policy-engine', topic: Queues.engineActions }, deps.logger);
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
