import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, silentLogger, type Logger } from '@trellis/common';
import { buildPgliteTemplateDir, openDatabase, type Database } from './database';
import { ALL_MIGRATIONS } from './migrations';
import { TEMPLATE_MANIFEST, unusableTemplate } from './pglite-template';
import { CloudFactEntity } from './entities';

describe('openDatabase', () => {
  describe('PGlite in a data directory', () => {
    let dir: string;
    const opened: Database[] = [];
    const open = async (logger: Logger = silentLogger) => {
      const db = await openDatabase({ url: null, dataDir: dir, poolSize: 10, logging: false }, logger);
      opened.push(db);
      return db;
    };

    beforeAll(() => {
      dir = join(mkdtempSync(join(tmpdir(), 'trellis-pglite-')), 'data');
    });
    afterAll(async () => {
      await Promise.all(opened.map((d) => d.close()));
      rmSync(join(dir, '..'), { recursive: true, force: true });
    });

    it('keeps the data across restarts, and refuses a second opener while it is open', async () => {
      const starts: Record<string, unknown>[] = [];
      const recorder: Logger = {
        ...silentLogger,
        info: (msg, fields) => void (msg === 'pglite started' && starts.push(fields ?? {})),
      };
      const first = await open(recorder);
      expect(first.kind).toBe('pglite');
      await first.dataSource.manager.save(CloudFactEntity, { kind: 'hypervisors', project: '', data: [{ name: 'hv1' }], fetched_at: new Date() });

      await expect(open()).rejects.toThrow(/TRELLIS_DATA_DIR is already open in this process/);
      await first.close();
      await first.close();
      expect(existsSync(join(dir, 'trellis.lock'))).toBe(false);

      const second = await open(recorder);
      const facts = await second.dataSource.manager.find(CloudFactEntity);
      expect(facts.map((f) => f.data)).toEqual([[{ name: 'hv1' }]]);
      expect(starts.map((s) => s.start)).toEqual(['cold', 'warm']);
      await second.close();
    });

    it('refuses a data directory locked by a live process, and takes over one whose process is gone', async () => {
      writeFileSync(join(dir, 'trellis.lock'), String(process.ppid));
      await expect(open()).rejects.toThrow(new RegExp(`TRELLIS_DATA_DIR is in use by process ${process.ppid}`));

      writeFileSync(join(dir, 'trellis.lock'), String(deadPid()));
      const db = await open();
      expect(await db.dataSource.manager.count(CloudFactEntity)).toBe(1);
      await db.close();
    });

    it('names TRELLIS_DATA_DIR when the directory cannot be created', async () => {
      const file = join(dir, '..', 'a-file');
      writeFileSync(file, 'not a directory');
      await expect(
        openDatabase({ url: null, dataDir: join(file, 'data'), poolSize: 1, logging: false }, silentLogger),
      ).rejects.toThrow(/TRELLIS_DATA_DIR cannot be created/);
    });
  });

  describe('PGlite from a prepared data directory', () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'trellis-pglite-template-'));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('copies the template into an empty data directory instead of running initdb, and keeps the data', async () => {
      const template = join(root, 'template');
      const built = await buildPgliteTemplateDir(template, silentLogger);
      expect(built.reused).toBe(false);
      expect(built.manifest.migrations).toEqual(ALL_MIGRATIONS.map((m) => m.name));
      expect(existsSync(join(template, 'trellis.lock'))).toBe(false);
      // a second build with the same PGlite and migrations keeps it
      expect((await buildPgliteTemplateDir(template, silentLogger)).reused).toBe(true);

      const events: Array<[string, Record<string, unknown>]> = [];
      const recorder: Logger = { ...silentLogger, info: (msg, fields) => void events.push([msg, fields ?? {}]) };
      const dataDir = join(root, 'data');
      const settings = { url: null, dataDir, poolSize: 1, logging: false };
      const db = await openDatabase(settings, recorder, { pgliteTemplateDir: template });
      expect(events.find(([msg]) => msg === 'pglite started')?.[1].start).toBe('prepared');
      expect(events.some(([msg]) => msg === 'database migrations applied')).toBe(false);
      expect(existsSync(join(dataDir, TEMPLATE_MANIFEST))).toBe(false);
      await db.dataSource.manager.save(CloudFactEntity, { kind: 'hypervisors', project: '', data: [{ name: 'hv1' }], fetched_at: new Date() });
      await db.close();

      events.length = 0;
      const again = await openDatabase(settings, recorder, { pgliteTemplateDir: template });
      expect(events.find(([msg]) => msg === 'pglite started')?.[1].start).toBe('warm');
      expect((await again.dataSource.manager.find(CloudFactEntity)).map((f) => f.data)).toEqual([[{ name: 'hv1' }]]);
      await again.close();
    }, 120_000);

    it('says why a template made by another PGlite, or none, is not used', () => {
      const template = join(root, 'template');
      const manifestFile = join(template, TEMPLATE_MANIFEST);
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
      writeFileSync(manifestFile, JSON.stringify({ ...manifest, pglite: '0.0.1' }));
      expect(unusableTemplate(template)).toMatch(/made by PGlite 0\.0\.1, this is \d+\.\d+/);
      expect(unusableTemplate(join(root, 'nowhere'))).toMatch(/no readable trellis-template.json/);
    });
  });

  it('names DATABASE_URL, without its password, when PostgreSQL cannot be reached', async () => {
    const url = 'postgres://trellis:s3cret@127.0.0.1:1/trellis';
    const error = await openDatabase({ url, dataDir: './data', poolSize: 2, logging: false }, silentLogger).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.variable).toBe('DATABASE_URL');
    expect(error.message).toMatch(/127\.0\.0\.1:1/);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toMatch(/s3cret/);
  });

  it('refuses a template for anything but an in-memory PGlite', async () => {
    const template = new Uint8Array([1]);
    const dataDir = join(tmpdir(), `trellis-${randomUUID()}`);
    await expect(
      openDatabase({ url: null, dataDir, poolSize: 1, logging: false }, silentLogger, { pgliteTemplate: template }),
    ).rejects.toThrow(/pgliteTemplate needs an in-memory database/);
    await expect(
      openDatabase({ url: 'postgres://x@127.0.0.1/x', dataDir, poolSize: 1, logging: false }, silentLogger, {
        pgliteTemplate: template,
      }),
    ).rejects.toThrow(/pgliteTemplate is only for PGlite/);
    expect(existsSync(dataDir)).toBe(false);
  });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}
