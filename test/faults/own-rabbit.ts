import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as amqp from 'amqplib';
import { ConsumerQueues, deadLetterQueueOf } from '@trellis/contracts';
import { waitFor } from '../support/processes';

const RABBIT_BIN = '/usr/lib/rabbitmq/bin/rabbitmq-server';

export interface OwnRabbitOptions {
  /** everything the node writes: data, logs, its own HOME (and so its own Erlang cookie) */
  dir: string;
  nodeName: string;
  amqpPort: number;
  distPort: number;
  logFile: string;
}

/**
 * A RabbitMQ node of the suite's own, so it can be SIGKILLed without touching the machine's shared
 * broker: its own node name, ports, data directory, config (loopback listener, no plugins, so no
 * management) and HOME (its own Erlang cookie). The script runs in a process group of its own;
 * `kill()` sends SIGKILL to the whole group (the shell wrapper and the Erlang VM), as a crash would.
 * The data directory survives a kill, so durable quorum queues and their messages come back.
 */
export class OwnRabbit {
  private child: ChildProcess | null = null;
  readonly url: string;

  constructor(private readonly o: OwnRabbitOptions) {
    this.url = `amqp://guest:guest@127.0.0.1:${o.amqpPort}`;
    for (const d of ['home', 'mnesia', 'log']) mkdirSync(join(o.dir, d), { recursive: true });
    writeFileSync(join(o.dir, 'rabbitmq.conf'), `listeners.tcp.1 = 127.0.0.1:${o.amqpPort}\nloopback_users = none\n`);
    writeFileSync(join(o.dir, 'enabled_plugins'), '[].\n');
    // an empty env file: the machine's /etc/rabbitmq/rabbitmq-env.conf names the shared node
    writeFileSync(join(o.dir, 'rabbitmq-env.conf'), '');
  }

  get pidFile(): string {
    return join(this.o.dir, 'pid');
  }

  async start(): Promise<void> {
    const d = this.o.dir;
    const log = openSync(this.o.logFile, 'a');
    this.child = spawn(RABBIT_BIN, [], {
      cwd: d,
      detached: true,
      stdio: ['ignore', log, log],
      env: {
        PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: join(d, 'home'),
        RABBITMQ_CONF_ENV_FILE: join(d, 'rabbitmq-env.conf'),
        RABBITMQ_NODENAME: this.o.nodeName,
        RABBITMQ_NODE_PORT: String(this.o.amqpPort),
        RABBITMQ_DIST_PORT: String(this.o.distPort),
        RABBITMQ_MNESIA_BASE: join(d, 'mnesia'),
        RABBITMQ_LOG_BASE: join(d, 'log'),
        RABBITMQ_PID_FILE: this.pidFile,
        RABBITMQ_ENABLED_PLUGINS_FILE: join(d, 'enabled_plugins'),
        RABBITMQ_CONFIG_FILE: join(d, 'rabbitmq.conf'),
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
        ERL_EPMD_ADDRESS: '127.0.0.1',
      },
    });
    closeSync(log);
    const child = this.child;
    // the AMQP listener opens once the node has booted (queues recovered), a few seconds
    await waitFor(
      `RabbitMQ ${this.o.nodeName} on port ${this.o.amqpPort}`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`rabbitmq-server exited (${child.exitCode ?? child.signalCode}); see ${this.o.logFile}`);
        const c = await amqp.connect(this.url);
        await c.close();
        return true;
      },
      90_000,
    );
  }

  /** SIGKILL to the node's process group: no clean shutdown, clients see their connection drop. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
    this.child = null;
  }

  /** Messages waiting in each consumer queue's dead-letter queue. */
  async deadLetterCounts(): Promise<Record<string, number>> {
    const c = await amqp.connect(this.url);
    try {
      const ch = await c.createChannel();
      const counts: Record<string, number> = {};
      for (const q of ConsumerQueues) {
        const dlq = deadLetterQueueOf(q.name);
        counts[dlq] = (await ch.checkQueue(dlq)).messageCount;
      }
      return counts;
    } finally {
      await c.close();
    }
  }
}
