import { randomBytes } from 'node:crypto';
import { loadConfig } from '@trellis/common';
import { startEmbedded } from '../../cli/embedded';
import { freshDatabase, freshVhost } from '../support/processes';
import { describeTenancy } from '../support/tenancy.scenario';
import { assertRealCloudAnswers, cleanupCloud, realCloudClient, realCloudSettings, type RealCloudUser } from './support/real-cloud';

/**
 * Issue 12, tenancy, against the real Keystone and Nova of ../shared/openstack, with Trellis on
 * RabbitMQ and PostgreSQL (a database and a vhost of its own) and the cloud's `trellis` service
 * user: demo (member of demo) owns one of each object; alt_demo (member of alt) and the cloud admin
 * try every route of the matrix (test/support/tenancy.matrix.ts) over REST and over RPC through
 * RabbitMQ; viewer (reader of demo) only reads. The same suite runs on the simulator in
 * test/e2e/tenancy.e2e-spec.ts. Servers and groups are named `os-matrix-…` and deleted afterwards.
 */
const PREFIX = 'os-matrix-';

const user = (who: RealCloudUser, project?: string) => {
  const s = realCloudSettings(who);
  return { name: s.username!, password: s.password!, project: project ?? s.projectName! };
};

describeTenancy({
  title: "another project cannot read, list, change or act on a project's objects (real Keystone + Nova, RabbitMQ + PostgreSQL)",
  prefix: `${PREFIX}${randomBytes(3).toString('hex')}-`,
  actionTimeoutMs: 120_000,
  setupTimeoutMs: 600_000,
  async start() {
    await assertRealCloudAnswers();
    await cleanupCloud(PREFIX, ['demo', 'alt']);
    const db = await freshDatabase();
    const vhost = freshVhost();
    const service = realCloudSettings('trellis');
    const config = loadConfig({
      TRELLIS_PORT: '0',
      TRELLIS_DATA_DIR: ':memory:',
      TRELLIS_POLL_INTERVAL_MS: '250',
      TRELLIS_FACTS_REFRESH_SECONDS: '2',
      // the matrix floods one project on purpose; the request rate has tests of its own
      TRELLIS_REQUESTS_PER_SECOND: '0',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      OS_AUTH_URL: service.authUrl!,
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
    });
    const trellis = await startEmbedded({ ...config, openstack: service });
    if (trellis.simulator) throw new Error('Trellis started its own simulator instead of using the real cloud');
    return {
      trellis,
      authUrl: service.authUrl!,
      users: {
        owner: user('demo'),
        reader: user('viewer'),
        projectAdmin: user('admin', 'demo'),
        stranger: user('alt'),
        admin: user('admin'),
      },
      async membersOf(groupId) {
        return (await realCloudClient('demo').getServerGroup(groupId))?.members ?? [];
      },
      async close() {
        try {
          await trellis.close();
          await cleanupCloud(PREFIX, ['demo', 'alt']);
        } finally {
          await db.drop();
          vhost.drop();
        }
      },
    };
  },
});
