import { parseArgs } from 'node:util';
import { actionFinishedKey } from './messages';
import { TrellisRpcClient, TrellisRpcError } from './trellis-rpc-client';

const USAGE = `usage: AMQP_URL=amqp://... OS_TOKEN=<keystone token> node scale-out.js --cluster <name or id> [--count N] [--timeout SECONDS]

Scales a cluster out over Trellis RPC and waits for the action-finished notification.
Prints one JSON object per line: the cluster, the accepted action, the finished action.
Exit status: 0 when the action SUCCEEDED, 1 on an error reply or a failure, 2 when it FAILED or was CANCELLED.`;

function print(event: string, fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

function options() {
  const { values } = parseArgs({
    options: {
      cluster: { type: 'string' },
      count: { type: 'string', default: '1' },
      timeout: { type: 'string', default: '300' },
      help: { type: 'boolean', default: false },
    },
  });
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n\n${USAGE}\n`);
    process.exit(1);
  };
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const url = process.env.AMQP_URL ?? fail('AMQP_URL is not set');
  const token = process.env.OS_TOKEN ?? fail('OS_TOKEN is not set (a Keystone token, e.g. `openstack token issue -f value -c id`)');
  const cluster = values.cluster ?? fail('--cluster is required');
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1) fail(`--count must be a positive integer (got '${values.count}')`);
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) fail(`--timeout must be a positive number of seconds (got '${values.timeout}')`);
  return { url, token, cluster, count, timeoutMs: timeout * 1000 };
}

async function main(): Promise<number> {
  const opts = options();
  const client = await TrellisRpcClient.connect(opts.url, opts.token);
  try {
    // Routing keys carry the cluster's id, not its name: resolve it first.
    const shown = await client.call<{ cluster: { id: string; name: string; desired_capacity: number } }>('cluster.show', {
      cluster_id: opts.cluster,
    });
    const cluster = shown.body.cluster;
    print('cluster', { id: cluster.id, name: cluster.name, desired_capacity: cluster.desired_capacity });

    // Subscribe before sending: the action may finish before the reply is read. The action id is
    // not known yet, so the binding takes every action of the cluster and waitFor picks ours.
    const finished = await client.subscribe(actionFinishedKey(cluster.id, '*'));
    try {
      const reply = await client.call('cluster.scale_out', { cluster_id: cluster.id }, { count: opts.count });
      const actionId = reply.action_id!;
      print('accepted', { action_id: actionId, status: reply.status, location: reply.headers.location ?? null });

      const done = await finished.waitFor(actionId, opts.timeoutMs);
      print('finished', { action_id: done.action_id, action: done.action, status: done.status, status_reason: done.status_reason });
      return done.status === 'SUCCEEDED' ? 0 : 2;
    } finally {
      await finished.close();
    }
  } finally {
    await client.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof TrellisRpcError) print('error', { pattern: e.pattern, status: e.reply.status, error: e.reply.error });
    else process.stderr.write(`scale-out: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
