// Shared jest settings: ts-jest in transpile-only mode (type checking is `npm run typecheck`),
// and the @trellis/* path aliases of tsconfig.json.
const moduleNameMapper = {
  '^@trellis/([a-z-]+)$': '<rootDir>/libs/$1/src',
  '^@trellis/([a-z-]+)/(.*)$': '<rootDir>/libs/$1/src/$2',
};
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json', diagnostics: false }],
    '/@nestjs/terminus/.+\\.js$': '<rootDir>/test/support/jest/esm-to-cjs.js',
    // the web page's plain ES modules, for the specs of its pure parts (apps/gateway/src/ui)
    '^.+/ui/static/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true }, diagnostics: false }],
  },
  // node_modules are not transformed, but for the ES-module-only @nestjs/terminus (see the transform)
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/terminus/)'],
  moduleNameMapper,
  setupFiles: ['reflect-metadata'],
};
