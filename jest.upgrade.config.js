// `npm run test:upgrade` (scripts/upgrade.sh): a rolling upgrade from the release before, on real
// RabbitMQ and PostgreSQL (AMQP_URL, DATABASE_URL); TRELLIS_PREVIOUS_ROOT is that release, built.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/upgrade/**/*.upgrade-spec.ts'],
  testTimeout: 300000,
};
