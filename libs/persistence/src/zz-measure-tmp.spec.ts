import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '@trellis/common';
import { createPgliteTemplate, openDatabase } from './database';
it('measures', async () => {
  const out: unknown[] = [];
  const logger: Logger = { ...silentLogger, info: (m, f) => void (m === 'pglite started' && out.push(f)) };
  const dir = mkdtempSync(join(tmpdir(), 'm-'));
  for (let i = 0; i < 3; i++) {
    const t = Date.now();
    const db = await openDatabase({ url: null, dataDir: join(dir, 'd'), poolSize: 1, logging: false }, logger);
    out.push({ openDatabaseMs: Date.now() - t });
    await db.close();
  }
  for (let i = 0; i < 2; i++) {
    const t = Date.now();
    const db = await openDatabase({ url: null, dataDir: ':memory:', poolSize: 1, logging: false }, logger);
    out.push({ openDatabaseMs: Date.now() - t });
    await db.close();
  }
  let t = Date.now();
  const tpl = await createPgliteTemplate(silentLogger);
  out.push({ templateMs: Date.now() - t, bytes: tpl.length });
  for (let i = 0; i < 2; i++) {
    t = Date.now();
    const db = await openDatabase({ url: null, dataDir: ':memory:', poolSize: 1, logging: false }, logger, { pgliteTemplate: tpl });
    out.push({ openDatabaseMs: Date.now() - t });
    await db.close();
  }
  writeFileSync('/tmp/pgt/measure.json', JSON.stringify(out, null, 0));
  rmSync(dir, { recursive: true });
});
