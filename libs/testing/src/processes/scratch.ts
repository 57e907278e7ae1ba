import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';

/** The PostgreSQL and RabbitMQ the integration tests and the benchmarks use when DATABASE_URL / AMQP_URL are not set. */
export const baseDatabaseUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const baseAmqpUrl = () => process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A TCP port free on loopback now, for a server started after this returns (it must know its URL
 * first). Taken below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by default):
 * a port from that range, free now, may be handed to any outgoing connection on the machine before
 * the server binds it (CI's bench smoke run lost `trellis start` to EADDRINUSE so, beside the
 * suites running at the same time). Random in [20000, range start), checked by binding it; where
 * the range cannot be read or leaves no room, the kernel's choice (port 0) as before.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const low = 20_000;
  const high = ephemeralStart();
  for (let attempt = 0; high - low >= 1_000 && attempt < 50; attempt++) {
    const port = await bindable(host, low + Math.floor(Math.random() * (high - low)));
    if (port !== null) return port;
  }
  return (await bindable(host, 0)) as number;
}

/** the first port of the kernel's ephemeral range, or 0 when unknown */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 0;
  } catch {
    return 0;
  }
}

/** `port` (0: the kernel's choice) once bound and closed again; null when it is in use */
function bindable(host: string, port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => (port !== 0 && (e.code === 'EADDRINUSE' || e.code === 'EACCES') ? resolve(null) : reject(e)));
    srv.listen(port, host, () => {
      const bound = (srv.address() as { port: number }).port;
      srv.close(() => resolve(bound));
    });
  });
}

export interface FreshDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** An empty database of its own on the base PostgreSQL (`<prefix>_<random>`), dropped by `drop()`. */
export async function freshDatabase(prefix = 'trellis_it'): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: baseDatabaseUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A RabbitMQ virtual host of its own (queue names are fixed; a vhost per run keeps runs apart),
 * dropped by `drop()`. Needs rabbitmqctl, which the development and CI machines have.
 */
export function freshVhost(prefix = 'trellis-it'): { name: string; url: string; drop(): void } {
  const vhost = `${prefix}-${randomBytes(4).toString('hex')}`;
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', vhost]);
  const user = new URL(baseAmqpUrl()).username || 'guest';
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', vhost, user, '.*', '.*', '.*']);
  const url = new URL(baseAmqpUrl());
  url.pathname = `/${vhost}`;
  return { name: vhost, url: url.toString(), drop: () => execFileSync('rabbitmqctl', ['-q', 'delete_vhost', vhost]) };
}
