import { resolve } from 'node:path';
import { createLogger, errorMessage } from '@trellis/common';
import { buildPgliteTemplateDir } from '@trellis/persistence';

/**
 * The prepared PGlite data directory the embedded default copies into an empty TRELLIS_DATA_DIR:
 * dist/cli/pglite-template, made by `npm run build` running this file. From the TypeScript sources
 * (tests) there is none, and a new data directory gets initdb as before.
 */
export const PGLITE_TEMPLATE_DIR = resolve(__dirname, 'pglite-template');

async function main(): Promise<void> {
  const started = Date.now();
  const { manifest, reused } = await buildPgliteTemplateDir(PGLITE_TEMPLATE_DIR, createLogger('pglite-template', 'warn'));
  if (reused) return;
  process.stdout.write(
    `pglite-template: ${PGLITE_TEMPLATE_DIR} (PGlite ${manifest.pglite}, ${manifest.migrations.length} migrations) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

if (require.main === module) {
  main().then(
    // the PGlite worker thread has ended; nothing else keeps the process
    () => undefined,
    (e) => {
      process.stderr.write(`pglite-template: ${errorMessage(e)}\n`);
      process.exit(1);
    },
  );
}
