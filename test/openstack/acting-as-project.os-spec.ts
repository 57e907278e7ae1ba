import { describeActingAsProject } from '../support/acting-as-project.scenario';
import { REAL_CLOUD, assertRealCloudAnswers, cleanupCloud, realCloudSettings } from './support/real-cloud';

/**
 * Issue 17 against the real Keystone + Nova: Trellis embedded (PGlite in memory) with the harness's
 * `trellis` service user, the test as demo, alt_demo, viewer and admin through the REST API, and
 * the result looked at in Nova as each of them. The same scenarios run on the simulator in
 * test/integration/acting-as-project.int-spec.ts.
 */
describeActingAsProject({
  title: 'Trellis acts in Nova as the project that asked (real Keystone + Nova)',
  prefix: 'os-tenancy-',
  testTimeoutMs: 300_000,
  async cloud() {
    await assertRealCloudAnswers();
    return {
      label: 'real cloud',
      settings: realCloudSettings,
      image: REAL_CLOUD.image,
      flavor: REAL_CLOUD.flavor,
      hostsByZone: REAL_CLOUD.hostsByZone,
      nodeNames: [REAL_CLOUD.drsHypervisor],
      cleanup: (prefix) => cleanupCloud(prefix, ['admin', 'demo', 'alt', 'trellis']),
      pollIntervalMs: 250,
      actionTimeoutMs: 120_000,
    };
  },
});
