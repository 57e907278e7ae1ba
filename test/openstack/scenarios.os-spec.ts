import { describeScenarios } from '../support/real-cloud-scenarios';
import { REAL_SCENARIO_CLOUD, assertRealCloudAnswers } from './support/real-cloud';

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
    return REAL_SCENARIO_CLOUD;
  },
});
