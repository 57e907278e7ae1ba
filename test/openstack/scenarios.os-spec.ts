import { describeScenarios } from '../support/real-cloud-scenarios';
import { REAL_CLOUD, assertRealCloudAnswers, cleanupCloud, realCloudSettings } from './support/real-cloud';

/**
 * Issue 5 §7 against the real Keystone + Nova: Trellis embedded (PGlite in memory) with the
 * harness's `trellis` service user (acting with each user's trust), the test as the demo user
 * (and the admin, for the forced host of DRS) through the REST API. The same
 * scenarios run on the simulator in test/e2e/openstack-scenarios.e2e-spec.ts.
 */
describeScenarios({
  title: 'placement scenarios against the real Keystone + Nova',
  prefix: 'os-scenario-',
  testTimeoutMs: 300_000,
  async cloud() {
    await assertRealCloudAnswers();
    return {
      label: 'real cloud',
      settings: realCloudSettings,
      image: REAL_CLOUD.image,
      flavor: REAL_CLOUD.flavor,
      hostsByZone: { az1: ['fake-host-1', 'fake-host-2'], az2: ['fake-host-3', 'fake-host-4'] },
      drs: { zone: 'az2', host: 'fake-host-4', hypervisor: REAL_CLOUD.drsHypervisor },
      cleanup: (prefix) => cleanupCloud(prefix, ['admin', 'demo', 'trellis']),
      pollIntervalMs: 250,
      actionTimeoutMs: 180_000,
    };
  },
});
