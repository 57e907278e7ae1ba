// `npm run test:integration`: against real RabbitMQ and PostgreSQL (AMQP_URL, DATABASE_URL).
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
  testTimeout: 300000,
};
