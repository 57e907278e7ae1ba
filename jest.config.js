// `npm test`: unit tests beside the code and e2e tests on the embedded default. No outside services.
const os = require('os');
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
  // jest's default is a worker less than the cores: one on a 2-core machine, where the e2e files
  // spend much of their time waiting on timers; two there took the suite from 326 s to 178 s
  // (Intel Xeon, 2 cores, 2026-12-07), as CI has always run it (--maxWorkers=2).
  maxWorkers: Math.max(2, os.availableParallelism() - 1),
};
