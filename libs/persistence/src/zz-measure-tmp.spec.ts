import { mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '@trellis/common';
import { createPgliteTemplate, openDatabase } from './database';
const log = (x: unknown) => appendFileSync('/tmp/pgt/measure.log', JSON.stringify(x) + '\n');
it('measures', async () => {
  const logger: Logger = { ...silentLogger, info: (m, f) => log({ m, ...f }), debug: (m, f) => log({ m, ...f }), warn: (m, f) => log({ m, ...f }), error: (m, f) => log({ m, ...f }) };
  const dir = mkdtempSync(join(tmpdir(), 'm-'));
  for (let i = 0; i < 0; i++) {
    const t = Date.now();
    log('open dir ' + i);
    const db = await openDatabase({ url: null, dataDir: join(dir, 'd'), poolSize: 1, logging: false }, logger);
    log({ openDatabaseMs: Date.now() - t });
    await db.close();
    log('closed');
  }
  for (let i = 0; i < 0; i++) {
    const t = Date.now();
    log('open mem ' + i);
    const db = await openDatabase({ url: null, dataDir: ':memory:', poolSize: 1, logging: false }, logger);
    log({ openDatabaseMs: Date.now() - t });
    await db.close();
  }
  let t = Date.now();
  log('template'); const tpl = await createPgliteTemplate(logger);
  log({ templateMs: Date.now() - t, bytes: tpl.length });
  for (let i = 0; i < 2; i++) {
    t = Date.now();
    const db = await openDatabase({ url: null, dataDir: ':memory:', poolSize: 1, logging: false }, logger, { pgliteTemplate: tpl });
    log({ openDatabaseMs: Date.now() - t });
    await db.close();
  }
  rmSync(dir, { recursive: true });
}, 120000);
