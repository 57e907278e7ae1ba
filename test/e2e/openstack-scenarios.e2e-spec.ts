import { loadConfig, type OpenStackSettings } from '@trellis/common';
import { createNovaClient } from '@trellis/nova';
import { loadTopology, startNovaSimulator, type RunningSimulator } from '../../apps/nova-simulator/src/simulator';
import { HARNESS_TOPOLOGY, cleanupByPrefix, describeScenarios, type CloudUser } from '../support/real-cloud-scenarios';

/**
 * Issue 5 §7: the scenarios of `npm run test:openstack` (test/openstack/scenarios.os-spec.ts), on
 * the Nova simulator with the harness's topology. The simulator runs on its own and Trellis is
 * pointed at it with OS_* settings, as at the real cloud, so that a reader can be Trellis's
 * service user too.
 */
let simulator: RunningSimulator | null = null;

/** the simulator's users, as the harness's: name, password, project */
const USERS: Record<CloudUser, [string, string, string]> = {
  admin: ['admin', 'admin', 'admin'],
  demo: ['demo', 'demo', 'demo'],
  viewer: ['viewer', 'demo', 'demo'],
  trellis: ['trellis', 'service-secret', 'service'],
};

function settings(user: CloudUser): OpenStackSettings {
  if (!simulator) throw new Error('the simulator is not running');
  const [name, password, project] = USERS[user];
  return loadConfig({
    OS_AUTH_URL: simulator.authUrl,
    OS_USERNAME: name,
    OS_PASSWORD: password,
    OS_PROJECT_NAME: project,
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
  }).openstack;
}

describeScenarios({
  title: 'placement scenarios of the real-cloud suite, on the Nova simulator',
  prefix: 'sim-scenario-',
  testTimeoutMs: 60_000,
  async cloud() {
    simulator = await startNovaSimulator({ port: 0, buildDelayMs: 50, topology: loadTopology(JSON.stringify(HARNESS_TOPOLOGY)) });
    const clients = (['admin', 'demo', 'trellis'] as const).map((u) => createNovaClient(settings(u)));
    return {
      label: 'Nova simulator',
      settings,
      image: 'cirros-fake',
      flavor: 'm1.tiny',
      hostsByZone: { az1: ['fake-host-1', 'fake-host-2'], az2: ['fake-host-3', 'fake-host-4'] },
      drs: { zone: 'az2', host: 'fake-host-4', hypervisor: 'fake-drs-cluster-4' },
      cleanup: (prefix) => cleanupByPrefix(clients, prefix),
      pollIntervalMs: 50,
      actionTimeoutMs: 30_000,
    };
  },
  teardown: async () => {
    await simulator?.close();
    simulator = null;
  },
});
