import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { waitFor } from '../support/processes';

export interface OwnPostgresOptions {
  /** the cluster's data directory (created by initdb, owned by `user`) */
  dataDir: string;
  socketDir: string;
  port: number;
  logFile: string;
  /** initdb refuses to run as root: the cluster belongs to this user when we are root */
  user?: string;
}

/** The newest PostgreSQL server binaries installed (/usr/lib/postgresql/<version>/bin). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  if (!versions.length) throw new Error(`no PostgreSQL server binaries under ${root} (initdb, pg_ctl)`);
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/**
 * A PostgreSQL cluster of the suite's own (initdb + pg_ctl on its own port and socket directory),
 * so it can be stopped with `-m immediate` (every backend killed without a checkpoint: a crash,
 * recovered from the WAL at the next start) without touching the machine's shared server.
 */
export class OwnPostgres {
  private readonly bin = postgresBin();
  private readonly user: string | null;
  readonly url: string;

  constructor(private readonly o: OwnPostgresOptions) {
    this.user = o.user ?? (process.getuid?.() === 0 ? 'postgres' : null);
    this.url = `postgres://postgres@127.0.0.1:${o.port}/trellis`;
  }

  /** initdb (trust auth for local connections), start, and create the `trellis` database. */
  async init(): Promise<void> {
    for (const d of [this.o.dataDir, this.o.socketDir]) {
      mkdirSync(d, { recursive: true, mode: 0o700 });
      if (this.user) chownSync(d, uid(this.user), gid(this.user));
    }
    writeFileSync(this.o.logFile, '', { flag: 'a' });
    if (this.user) chownSync(this.o.logFile, uid(this.user), gid(this.user));
    this.run('initdb', ['-D', this.o.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await this.start();
    const c = new Client({ connectionString: this.url.replace(/\/trellis$/, '/postgres') });
    await c.connect();
    await c.query('CREATE DATABASE trellis');
    await c.end();
  }

  async start(): Promise<void> {
    const options = [`-p ${this.o.port}`, `-k ${this.o.socketDir}`, '-c listen_addresses=127.0.0.1', '-c max_connections=200'];
    this.run('pg_ctl', ['-D', this.o.dataDir, '-l', this.o.logFile, '-o', options.join(' '), '-w', '-t', '60', 'start']);
    await waitFor(`PostgreSQL on port ${this.o.port}`, async () => {
      const c = new Client({ connectionString: this.url.replace(/\/trellis$/, '/postgres') });
      await c.connect();
      await c.end();
      return true;
    });
  }

  /** `pg_ctl stop -m immediate`: the server quits at once, clients see their connections drop. */
  stopImmediate(): void {
    this.run('pg_ctl', ['-D', this.o.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  /** Stops the server if it runs (used by the clean-up, so it never throws). */
  stopQuietly(): void {
    if (!existsSync(join(this.o.dataDir, 'postmaster.pid'))) return;
    try {
      this.stopImmediate();
    } catch {
      /* not running */
    }
  }

  private run(tool: string, args: string[]): void {
    const exe = join(this.bin, tool);
    const [cmd, argv] = this.user ? ['runuser', ['-u', this.user, '--', exe, ...args]] : [exe, args];
    execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/tmp' });
  }
}

const idOf = (flag: '-u' | '-g', user: string) => Number(execFileSync('id', [flag, user]).toString().trim());
const uid = (user: string) => idOf('-u', user);
const gid = (user: string) => idOf('-g', user);
