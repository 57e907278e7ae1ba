import { NestFactory } from '@nestjs/core';
import { EngineModule, type EngineDeps } from './engine.module';

export interface RunningEngine {
  close(): Promise<void>;
}

/** Starts the policy-engine on the given database and bus (alone, or beside the other services). */
export async function startPolicyEngine(deps: EngineDeps): Promise<RunningEngine> {
  const app = await NestFactory.createApplicationContext(EngineModule.forRoot(deps), { logger: false });
  await app.init();
  return { close: () => app.close() };
}
