// `npm test`: unit tests beside the code and e2e tests on the embedded default. No outside services.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: [
    '<rootDir>/{apps,libs,cli,examples,plugins}/**/*.spec.ts',
    '<rootDir>/test/architecture/**/*.spec.ts',
    '<rootDir>/test/faults/**/*.spec.ts',
    '<rootDir>/test/e2e/**/*.e2e-spec.ts',
  ],
  testTimeout: 60000,
};
