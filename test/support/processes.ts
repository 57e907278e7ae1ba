import { join } from 'node:path';
import { ServiceProcess as SharedServiceProcess, waitFor as sharedWaitFor } from '@trellis/testing/processes';

/**
 * The integration tests' view of the shared process helpers (libs/testing/src/processes, which the
 * benchmarks use too): a service named by its entry point under dist/, and a `waitFor` taking a
 * plain timeout.
 */

const ROOT = join(__dirname, '..', '..');

export { baseAmqpUrl, baseDatabaseUrl, freePort, freshDatabase, freshVhost } from '@trellis/testing/processes';
export { simulatorCloudEnv } from '@trellis/testing/simulator-env';

export class ServiceProcess extends SharedServiceProcess {
  constructor(name: string, entry: string, env: Record<string, string>, logFile?: string) {
    super(name, [join(ROOT, 'dist', entry)], env, { cwd: ROOT, logFile });
  }

  /** SIGTERM, SIGKILL after 10 s */
  override async stop(): Promise<void> {
    await super.stop(10_000);
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  return sharedWaitFor(what, probe, { timeoutMs });
}
