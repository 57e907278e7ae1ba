import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Exchanges, Queues, RoutingKeys, SCHEMA_VERSION, deadLetterQueueOf } from '@trellis/contracts';
import { loadConfig } from '@trellis/common';
import { ActionEntity, row } from '@trellis/persistence';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import type { ReplaySummary } from '../../cli/commands/replay.command';
import { ApiClient } from '../support/api-client';
import { demoApi } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { freshDatabase, freshVhost, waitFor } from '../support/processes';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/**
 * `trellis replay` (the compiled CLI, as an operator runs it) against RabbitMQ + PostgreSQL while
 * the services run: an action whose message never reached the broker, and a message that was
 * dead-lettered, are both re-published and then carried through.
 */
describe('trellis replay (RabbitMQ + PostgreSQL)', () => {
  let trellis: Embedded;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let vhost: ReturnType<typeof freshVhost>;
  let api: ApiClient;

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
    trellis = await startEmbedded(
      loadConfig({
        DATABASE_URL: db.url,
        AMQP_URL: vhost.url,
        TRELLIS_PORT: '0',
        SIMULATOR_PORT: '0',
        SIMULATOR_BUILD_DELAY_MS: '50',
        TRELLIS_POLL_INTERVAL_MS: '50',
        TRELLIS_RESUME_INTERVAL_SECONDS: '3600',
        LOG_LEVEL: 'error',
      }),
    );
    api = await demoApi(trellis);
  });
  afterAll(async () => {
    await trellis?.close();
    vhost?.drop();
    await db?.drop();
  });

  const replay = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'replay', ...args], {
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, AMQP_URL: vhost.url, LOG_LEVEL: 'error' },
    });
    return JSON.parse(stdout) as ReplaySummary;
  };

  /** an action.requested message for an action that does not exist: the engine dead-letters it every time */
  const poison = (clusterId: string, project: string, actionId = randomUUID()) => {
    const messageId = randomUUID();
    return trellis.infra.bus.publish({
      exchange: Exchanges.actions,
      routingKey: RoutingKeys.actionRequested,
      type: RoutingKeys.actionRequested,
      messageId,
      body: {
        message_id: messageId,
        schema_version: SCHEMA_VERSION,
        action_id: actionId,
        correlation_id: 'replay-test',
        cluster_id: clusterId,
        action: 'CLUSTER_SCALE_OUT',
        project,
        cause: 'submitted',
      },
    }).then(() => messageId);
  };
  const deadLetters = () => trellis.infra.bus.depth(deadLetterQueueOf(Queues.engineActions));

  const ownerOf = async (clusterId: string): Promise<string> =>
    ((await trellis.infra.database.dataSource.query(`SELECT "user" FROM clusters WHERE id = $1`, [clusterId])) as Array<{ user: string }>)[0].user;

  /** a READY scale-out stored without its message, as if the gateway died before publishing */
  async function strandedAction(clusterId: string, project: string): Promise<string> {
    const id = randomUUID();
    await trellis.infra.database.dataSource.getRepository(ActionEntity).insert(row<ActionEntity>({
      id,
      name: `cluster_scale_out_${clusterId.slice(0, 8)}`,
      cluster_id: clusterId,
      target: clusterId,
      action: 'CLUSTER_SCALE_OUT',
      cause: 'RPC Request',
      timeout: 3600,
      status: 'READY',
      inputs: { count: 1 },
      project,
      // the user who made the cluster: its trust is what the worker acts with (docs/SECURITY.md)
      user: await ownerOf(clusterId),
      domain: null,
      created_at: new Date(),
    }));
    return id;
  }

  it('re-publishes a READY action that never reached the engine', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'stranded');
    const project = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.project;
    const id = await strandedAction(clusterId, project);
    const summary = await replay('--older-than', '0', '--no-dead-letters');
    expect(summary.actions).toEqual([expect.objectContaining({ id, why: 'READY but not taken up by a policy-engine' })]);
    expect((await api.waitForAction(id)).status).toBe('SUCCEEDED');
    expect(await nodesOf(api, clusterId)).toHaveLength(1);
  });

  it('moves a dead-lettered message back to its queue', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'dead');
    const project = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.project;
    // a message for an action that does not exist (yet): the engine dead-letters it with the reason
    const actionId = randomUUID();
    await poison(clusterId, project, actionId);
    await waitFor('the dead letter', async () => (await deadLetters()) === 1);
    // the action appears; replaying the dead letter now carries it through
    await trellis.infra.database.dataSource.getRepository(ActionEntity).insert(row<ActionEntity>({
      id: actionId,
      name: 'cluster_scale_out_x',
      cluster_id: clusterId,
      target: clusterId,
      action: 'CLUSTER_SCALE_OUT',
      cause: 'RPC Request',
      timeout: 3600,
      status: 'READY',
      inputs: { count: 2 },
      project,
      // the user who made the cluster: its trust is what the worker acts with (docs/SECURITY.md)
      user: await ownerOf(clusterId),
      domain: null,
      created_at: new Date(),
    }));
    const summary = await replay('--action', actionId);
    expect(summary.dead_letters[Queues.engineActions]).toBe(1);
    expect(summary.messages).toEqual([expect.objectContaining({ action_id: actionId, outcome: 'republished' })]);
    expect((await api.waitForAction(actionId)).status).toBe('SUCCEEDED');
    expect(await nodesOf(api, clusterId)).toHaveLength(2);
    expect(await trellis.infra.bus.depth(deadLetterQueueOf(Queues.engineActions))).toBe(0);
  });

  it('replays a poison message once per run and counts it once, however fast the engine refuses it again', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'poison');
    const project = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.project;
    const ids = [await poison(clusterId, project), await poison(clusterId, project), await poison(clusterId, project)];
    await waitFor('three dead letters', async () => (await deadLetters()) === 3);

    for (let run = 1; run <= 3; run++) {
      const summary = await replay();
      expect(summary.dead_letters[Queues.engineActions]).toBe(3);
      const looked = summary.messages.filter((m) => m.queue === Queues.engineActions);
      expect(looked.map((m) => m.message_id).sort()).toEqual([...ids].sort());
      expect(looked.every((m) => m.outcome === 'republished')).toBe(true);
      // the engine refuses them again: they are back, once each, for the next run
      await waitFor('the three back in the dead-letter queue', async () => (await deadLetters()) === 3);
    }
  });

  it('refuses a misspelt flag with status 2 and replays nothing', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'typo');
    const project = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.project;
    const before = await deadLetters();
    await poison(clusterId, project);
    await waitFor('the dead letter', async () => (await deadLetters()) === before + 1);

    const refused = await replay('--acton', randomUUID()).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("trellis replay: unknown option '--acton'") });
    expect(await deadLetters()).toBe(before + 1);
  });
});
