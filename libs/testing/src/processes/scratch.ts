import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';

/** The PostgreSQL and RabbitMQ the integration tests and the benchmarks use when DATABASE_URL / AMQP_URL are not set. */
export const baseDatabaseUrl = () => process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const baseAmqpUrl = () => process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
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
