// `npm run test:ui`: the web page at /ui in a real headless Chromium (Debian's /usr/bin/chromium, or
// CHROMIUM_PATH, driven by playwright-core) against the embedded default. Screenshots go to
// test-artifacts/ui/ (git-ignored). .ci/run installs chromium when it is missing.
const shared = require('./jest.shared');
module.exports = {
  ...shared,
  testMatch: ['<rootDir>/test/ui/**/*.ui-spec.ts'],
  testTimeout: 120000,
};
