// `npm run test:faults`: the fault-injection suite (docs/RELIABILITY.md §9). It starts its own
// RabbitMQ node and PostgreSQL cluster and the services from dist/ (build first); one long scenario.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/faults/**/*.faults-spec.ts'],
  testTimeout: 900000,
};
