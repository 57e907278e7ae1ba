import { describeTenancy } from '../support/tenancy.scenario';
import { startTestTrellis } from '../support/trellis';

/**
 * Issue 12, tenancy, on the embedded default with the simulator's Keystone: demo (member of demo)
 * owns one of each object; alt_demo (member of alt_demo) and the cloud admin try every route of
 * the gateway against them (test/support/tenancy.matrix.ts), over REST and over RPC, and get what
 * they get for objects that do not exist, with nothing of demo's in any answer; viewer (reader of
 * demo) reads what demo reads and changes nothing; demo's objects read the same afterwards.
 */
describeTenancy({
  title: "another project cannot read, list, change or act on a project's objects (embedded default)",
  prefix: 'tenancy-',
  actionTimeoutMs: 30_000,
  setupTimeoutMs: 180_000,
  async start() {
    // the matrix sends hundreds of requests as one project in seconds: the request rate is not what it tests
    const t = await startTestTrellis({ env: { SIMULATOR_BUILD_DELAY_MS: '20', TRELLIS_REQUESTS_PER_SECOND: '0' } });
    const simulator = t.trellis.simulator!;
    return {
      trellis: t.trellis,
      authUrl: simulator.authUrl,
      users: {
        owner: { name: 'demo', password: 'demo', project: 'demo' },
        reader: { name: 'viewer', password: 'demo', project: 'demo' },
        projectAdmin: { name: 'admin', password: 'admin', project: 'demo' },
        stranger: { name: 'alt_demo', password: 'demo', project: 'alt_demo' },
        admin: { name: 'admin', password: 'admin', project: 'admin' },
      },
      async membersOf(groupId) {
        const groups = (simulator.state.snapshot() as { server_groups: Array<{ id: string; members: string[] }> }).server_groups;
        return groups.find((g) => g.id === groupId)?.members ?? [];
      },
      close: () => t.close(),
    };
  },
});
