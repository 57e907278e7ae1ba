import { describeNovaClientContract } from '../contract/nova-client.contract';
import { REAL_CLOUD, assertRealCloudAnswers, cleanupCloud, realCloudSettings } from './support/real-cloud';

// The contract names everything it creates `contract-<run>...` and deletes it by id in its afterAll.
const PREFIX = 'contract-';

describeNovaClientContract('real Keystone + Nova (../shared/openstack)', async () => {
  await assertRealCloudAnswers();
  // what an interrupted earlier run left behind
  await cleanupCloud(PREFIX);
  return {
    settings: realCloudSettings('admin'),
    memberSettings: realCloudSettings('demo'),
    image: REAL_CLOUD.image,
    flavor: REAL_CLOUD.flavor,
    zones: REAL_CLOUD.zones,
    cleanup: async () => {
      // runs after the contract's own deletes: anything found now is something it failed to remove
      const left = await cleanupCloud(PREFIX);
      const names = [...left.servers, ...left.groups].map((x) => `${x.name} (${x.id})`);
      if (names.length > 0) throw new Error(`the contract left behind, now deleted: ${names.join(', ')}`);
    },
  };
});
