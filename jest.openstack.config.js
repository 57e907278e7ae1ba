// `npm run test:openstack`: against the real Keystone + Nova of ../shared/openstack.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/openstack/**/*.os-spec.ts'],
  testTimeout: 600000,
};
