import { loadConfig } from '@trellis/common';
import { createNovaClient } from '@trellis/nova';
import { loadTopology, startNovaSimulator, type RunningSimulator } from '../../apps/nova-simulator/src/simulator';
import { describeActingAsProject, type ProjectUser } from '../support/acting-as-project.scenario';
import { freshDatabase, freshVhost } from '../support/processes';
import { HARNESS_TOPOLOGY, cleanupByPrefix } from '../support/real-cloud-scenarios';

/**
 * Issue 17 on the simulator, with Trellis on RabbitMQ + PostgreSQL: the scenarios of
 * test/openstack/acting-as-project.os-spec.ts, with the simulator's users (alt_demo's project is
 * named alt_demo there).
 */
let simulator: RunningSimulator | null = null;

const USERS: Record<ProjectUser, { name: string; password: string; project: string }> = {
  admin: { name: 'admin', password: 'admin', project: 'admin' },
  demo: { name: 'demo', password: 'demo', project: 'demo' },
  alt: { name: 'alt_demo', password: 'demo', project: 'alt_demo' },
  viewer: { name: 'viewer', password: 'demo', project: 'demo' },
  trellis: { name: 'trellis', password: 'service-secret', project: 'service' },
};

function settings(user: ProjectUser) {
  if (!simulator) throw new Error('the simulator is not running');
  const u = USERS[user];
  return loadConfig({
    OS_AUTH_URL: simulator.authUrl,
    OS_USERNAME: u.name,
    OS_PASSWORD: u.password,
    OS_PROJECT_NAME: u.project,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
  }).openstack;
}

afterAll(async () => {
  await simulator?.close();
  simulator = null;
});

describeActingAsProject({
  title: 'Trellis acts in Nova as the project that asked (simulator, RabbitMQ + PostgreSQL)',
  prefix: 'int-tenancy-',
  testTimeoutMs: 90_000,
  async cloud() {
    simulator = await startNovaSimulator({ port: 0, buildDelayMs: 50, topology: loadTopology(JSON.stringify(HARNESS_TOPOLOGY)) });
    const clients = (['admin', 'demo', 'alt', 'trellis'] as const).map((u) => createNovaClient(settings(u)));
    return {
      label: 'Nova simulator',
      settings,
      image: 'cirros-fake',
      flavor: 'm1.tiny',
      hostsByZone: { az1: ['fake-host-1', 'fake-host-2'], az2: ['fake-host-3', 'fake-host-4'] },
      nodeNames: ['fake-drs-cluster-4'],
      pollIntervalMs: 50,
      actionTimeoutMs: 30_000,
      cleanup: (prefix) => cleanupByPrefix(clients, prefix),
      async trellisEnv() {
        const db = await freshDatabase();
        const vhost = freshVhost();
        return {
          env: { DATABASE_URL: db.url, AMQP_URL: vhost.url },
          drop: async () => {
            await db.drop();
            await vhost.drop();
          },
        };
      },
    };
  },
});
