// @nestjs/terminus 12 ships ES modules only. Node 20 loads them from CommonJS (require(esm)), but
// jest's module system does so only on Node 24.9+; this turns the package's files into CommonJS for
// the tests, as Node itself would run them. `import.meta` has no CommonJS form, so its uses in the
// package get their CommonJS equivalents (the module's own `require` replaces one made by createRequire).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

// jest caches transformed files by their text; this file's own text is part of the key too
const SELF = readFileSync(__filename, 'utf8');

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha256').update(SELF).update(ts.version).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    const cjsReady = source
      .replace(/^const require = createRequire\(import\.meta\.url\);$/m, '')
      .replace(/\bimport\.meta\.resolve\(/g, 'require.resolve(')
      .replace(/\bimport\.meta\.dirname\b/g, '__dirname');
    const { outputText } = ts.transpileModule(cjsReady, {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, allowJs: true, esModuleInterop: true },
    });
    return { code: outputText };
  },
};
