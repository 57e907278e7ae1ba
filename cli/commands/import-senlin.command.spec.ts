import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runImportSenlin } from './import-senlin.command';
import { captureStdio } from '../testing/capture-stdio';

/** What the command refuses before it connects to anything. */
describe('trellis import-senlin command line', () => {
  const std = captureStdio();

  it('needs --from', async () => {
    expect(await runImportSenlin(['--dry-run'])).toBe(2);
    expect(std.err).toMatch(/^trellis import-senlin: --from is required: Senlin's database, e\.g\. mysql:\/\//);
  });

  it.each([
    ['postgres://u:secret@h/senlin', /--from must be a mysql:\/\/ URL/],
    ['mysql://u:secret@h:3306', /--from names no database/],
    ['not a url secret', /--from must be a URL such as mysql:\/\/senlin:PASSWORD@127\.0\.0\.1:3306\/senlin/],
  ])('refuses --from %s, naming the flag', async (url, message) => {
    expect(await runImportSenlin(['--from', url])).toBe(2);
    expect(std.err).toMatch(message);
    expect(std.out).toBe('');
  });

  it.each([
    [['--from', 'mysql://u:secret@h/sen\0lin'], /--from names a database with a control character or a slash: 'sen%00lin'/],
    [['--from', 'mysql://u:secret@h/a', '--from', 'mysql://u:secret@h/b'], /--from is given more than once/],
    [['--from', 'mysql://u:secret@h/a', '--cluster', ''], /--cluster takes an id: not empty, no control characters/],
    [['--from', 'mysql://u:secret@h/a', '--project', 'p\0'], /--project takes an id/],
  ])('refuses %j before it connects to anything, naming the flag', async (args, message) => {
    expect(await runImportSenlin(args)).toBe(2);
    expect(std.err).toMatch(message);
    expect(std.err).not.toContain('secret');
  });

  it('reads the URL from a file given as @FILE, and names a file it cannot read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-senlin-'));
    try {
      writeFileSync(join(dir, 'url'), 'postgres://u:secret@h/senlin\n');
      expect(await runImportSenlin(['--from', `@${join(dir, 'url')}`])).toBe(2);
      expect(std.err).toMatch(/--from must be a mysql:\/\/ URL/);
      std.err = '';
      expect(await runImportSenlin(['--from', `@${join(dir, 'missing')}`])).toBe(2);
      expect(std.err).toContain(`--from @${join(dir, 'missing')}: cannot read the file (ENOENT)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("needs the cloud's OS_* settings: it reads every node's server from Nova", async () => {
    const saved = { ...process.env };
    for (const k of Object.keys(process.env)) if (k.startsWith('OS_')) delete process.env[k];
    try {
      expect(await runImportSenlin(['--from', 'mysql://senlin:x@127.0.0.1:1/senlin'])).toBe(2);
      expect(std.err).toMatch(/set OS_AUTH_URL \(or OS_CLOUD\)/);
    } finally {
      process.env = saved;
    }
  });
});
