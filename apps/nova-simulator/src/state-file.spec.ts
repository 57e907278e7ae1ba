import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boot, call, createGroup, login } from './spec-helpers';
import { startNovaSimulator, StateFileError, type RunningSimulator } from './simulator';

const SERVERS = '/compute/v2.1/servers';

describe('the simulator state file', () => {
  let dir: string;
  let file: string;
  const running: RunningSimulator[] = [];
  const start = async (stateFile = file) => {
    const sim = await startNovaSimulator({ buildDelayMs: 0, stateFile });
    running.push(sim);
    return sim;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-sim-state-'));
    file = join(dir, 'state', 'nova-simulator.json');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps servers, server groups, tokens and trusts across a restart', async () => {
    const first = await start();
    expect(first.restoredServers).toBeNull();
    const demo = await login(first, 'demo');
    const group = await createGroup(first, demo, 'anti-affinity');
    const made = await boot(first, { token: demo, name: 'kept', group, zone: 'az1', metadata: { cluster: 'c1' } });
    expect(made.status).toBe(202);
    const gone = await boot(first, { token: demo, name: 'deleted' });
    expect((await call(first, 'DELETE', `${SERVERS}/${gone.body.server.id}`, { token: demo, version: '2.64' })).status).toBe(204);
    const ids = Object.fromEntries(first.state.identity.users.map((u) => [u.name, u.id]));
    const trust = await call(first, 'POST', '/identity/v3/OS-TRUST/trusts', {
      token: demo,
      body: { trust: { trustor_user_id: ids.demo, trustee_user_id: ids.trellis, project_id: first.state.projectId('demo'), impersonation: true, roles: [{ name: 'member' }] } },
    });
    expect(trust.status).toBe(201);
    const before = (await call(first, 'GET', `${SERVERS}/${made.body.server.id}`, { token: demo, version: '2.64' })).body.server;
    await first.close();
    expect(existsSync(file)).toBe(true);

    const second = await start();
    expect(second.restoredServers).toBe(1);
    // the token issued before the restart still works, and shows the same server where it was
    const after = await call(second, 'GET', `${SERVERS}/${made.body.server.id}`, { token: demo, version: '2.64' });
    expect(after.status).toBe(200);
    expect(after.body.server).toMatchObject({
      status: 'ACTIVE',
      name: 'kept',
      metadata: { cluster: 'c1' },
      'OS-EXT-AZ:availability_zone': before['OS-EXT-AZ:availability_zone'],
      hostId: before.hostId,
    });
    expect((await call(second, 'GET', `${SERVERS}/${gone.body.server.id}`, { token: demo, version: '2.64' })).status).toBe(404);
    const groupShown = await call(second, 'GET', `/compute/v2.1/os-server-groups/${group}`, { token: demo, version: '2.64' });
    expect(groupShown.body.server_group.members).toEqual([made.body.server.id]);
    const trellis = await login(second, 'trellis');
    expect((await call(second, 'GET', `/identity/v3/OS-TRUST/trusts/${trust.body.trust.id}`, { token: trellis })).status).toBe(200);
    // a new server gets a new instance number, not one a restored server holds
    const next = await boot(second, { token: demo, name: 'next' });
    const names = second.state.servers().map((s) => s.instanceNumber);
    expect(new Set(names).size).toBe(names.length);
    expect(next.status).toBe(202);
  });

  it('saves shortly after a change, without waiting for close', async () => {
    const sim = await start();
    const demo = await login(sim, 'demo');
    await boot(sim, { token: demo, name: 'soon' });
    const deadline = Date.now() + 5000;
    while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.state.servers.map((s: { name: string }) => s.name)).toContain('soon');
  });

  it('refuses to start on a file that is not a saved state, naming it', async () => {
    writeFileSync(join(dir, 'bad.json'), '{"format": "something else"}');
    await expect(start(join(dir, 'bad.json'))).rejects.toThrow(StateFileError);
    await expect(start(join(dir, 'bad.json'))).rejects.toThrow(`the simulator's state file ${join(dir, 'bad.json')} is not a saved state`);
    writeFileSync(join(dir, 'cut.json'), '{"format": "trellis-nova-simulator-state/1", "state": {"servers": [');
    await expect(start(join(dir, 'cut.json'))).rejects.toThrow(/is not JSON/);
  });
});
