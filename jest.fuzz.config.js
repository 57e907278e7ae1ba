// `npm run test:fuzz`: the fuzz suite (docs/RELIABILITY.md §10). REST on the embedded default, the
// queues on RabbitMQ and PostgreSQL (AMQP_URL, DATABASE_URL). FUZZ_RUNS and FUZZ_SEED: scripts/fuzz.sh.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/fuzz/**/*.fuzz-spec.ts'],
  testTimeout: 300000,
};
