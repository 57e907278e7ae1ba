import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@trellis/common';
import { startEmbedded, type Embedded } from '../../cli/embedded';
import { PLACEMENT_TOPOLOGY, antiAffinityWithZones, drsPlacement } from '../support/placement.scenario';
import { freshDatabase, freshVhost } from '../support/processes';

/** The placement scenarios of issue 4 on RabbitMQ + PostgreSQL (same handlers, other adapters). */
describe('placement policies that really place (RabbitMQ + PostgreSQL)', () => {
  let trellis: Embedded;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let vhost: ReturnType<typeof freshVhost>;

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
    const dir = mkdtempSync(join(tmpdir(), 'trellis-topology-'));
    writeFileSync(join(dir, 'topology.json'), JSON.stringify(PLACEMENT_TOPOLOGY));
    trellis = await startEmbedded(
      loadConfig({
        DATABASE_URL: db.url,
        AMQP_URL: vhost.url,
        TRELLIS_PORT: '0',
        SIMULATOR_PORT: '0',
        SIMULATOR_BUILD_DELAY_MS: '50',
        SIMULATOR_TOPOLOGY_FILE: join(dir, 'topology.json'),
        TRELLIS_POLL_INTERVAL_MS: '50',
        LOG_LEVEL: 'error',
      }),
    );
  });
  afterAll(async () => {
    await trellis?.close();
    vhost?.drop();
    await db?.drop();
  });

  it('anti-affinity + zones 100/200: 2 + 4 on 6 hosts, scale-in keeps the weights, NoValidHost fails', () =>
    antiAffinityWithZones(trellis));

  it('DRS: servers land on the vSphere DRS host', () => drsPlacement(trellis));
});
