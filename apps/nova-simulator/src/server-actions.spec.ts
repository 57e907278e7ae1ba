import { advanceClock, bootAndShow, call, login, sample, shapeOf } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const SERVERS = '/compute/v2.1/servers';

describe('server actions (POST /servers/{id}/action)', () => {
  let sim: RunningSimulator;
  let admin: string;
  let demo: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 2000 });
    admin = await login(sim, 'admin');
    demo = await login(sim, 'demo');
  });
  afterAll(() => sim.close());

  async function activeServer(): Promise<string> {
    const s = await bootAndShow(sim, { token: demo }, admin);
    await advanceClock(sim, 3000);
    return s.id as string;
  }
  const act = (id: string, body: unknown, token = demo) => call(sim, 'POST', `${SERVERS}/${id}/action`, { token, version: '2.64', body });
  const show = async (id: string) => (await call(sim, 'GET', `${SERVERS}/${id}`, { token: admin, version: '2.64' })).body.server;

  it("lists a server's instance actions newest first, in Nova's shape, each under the request id its answer carried", async () => {
    const id = await activeServer();
    const rebooted = await act(id, { reboot: { type: 'SOFT' } });
    await advanceClock(sim, 1000);
    expect((await act(id, { 'os-stop': null })).status).toBe(202);
    expect((await act(id, { reboot: { type: 'SOFT' } })).status).toBe(409); // refused (it is stopping): not recorded
    const list = (version: string, token = demo) => call(sim, 'GET', `${SERVERS}/${id}/os-instance-actions`, { token, version });

    const old = await list('2.1');
    const recent = await list('2.58');

    expect(old.status).toBe(200);
    expect(old.body.instanceActions.map((a: { action: string }) => a.action)).toEqual(['stop', 'reboot', 'create']);
    expect(old.body.instanceActions[1]).toMatchObject({ instance_uuid: id, request_id: rebooted.headers.get('x-openstack-request-id'), message: null });
    expect(old.body.instanceActions[1].start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000$/);
    expect(shapeOf(old.body).sort()).toEqual(shapeOf(sample('os-instance-actions.2.1.json')).sort());
    expect(shapeOf(recent.body).sort()).toEqual(shapeOf(sample('os-instance-actions.2.58.json')).sort());
    // another project's member does not see the server at all
    expect((await list('2.1', await login(sim, 'alt_demo'))).status).toBe(404);
  });

  it('reboots: 202, HARD_REBOOT with task rebooting_hard, then ACTIVE', async () => {
    const id = await activeServer();
    expect((await act(id, { reboot: { type: 'HARD' } })).status).toBe(202);
    expect(await show(id)).toMatchObject({ status: 'HARD_REBOOT', 'OS-EXT-STS:task_state': 'rebooting_hard' });
    await advanceClock(sim, 1000);
    expect(await show(id)).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': null });
  });

  it('stops and starts; refuses to stop a stopped server and to act while a task runs (409)', async () => {
    const id = await activeServer();
    expect((await act(id, { 'os-stop': null })).status).toBe(202);
    const busy = await act(id, { 'os-start': null });
    expect(busy.status).toBe(409);
    expect(busy.body.conflictingRequest.message).toBe(`Cannot 'os-start' instance ${id} while it is in task_state powering-off`);
    await advanceClock(sim, 1000);
    expect(await show(id)).toMatchObject({ status: 'SHUTOFF', 'OS-EXT-STS:vm_state': 'stopped', 'OS-EXT-STS:power_state': 0 });
    const again = await act(id, { 'os-stop': null });
    expect(again.status).toBe(409);
    expect(again.body.conflictingRequest.message).toBe(`Cannot 'os-stop' instance ${id} while it is in vm_state stopped`);
    expect((await act(id, { 'os-start': null })).status).toBe(202);
    await advanceClock(sim, 1000);
    expect((await show(id)).status).toBe('ACTIVE');
  });

  it('rebuilds with an image; locks a server against a member; 404 for an unknown server, 400 for an unknown action, 403 migrate for a member', async () => {
    const id = await activeServer();
    const rebuilt = await act(id, { rebuild: { imageRef: (await show(id)).image.id } });
    expect(rebuilt.status).toBe(202);
    expect(rebuilt.body.server.status).toBe('REBUILD');
    await advanceClock(sim, 1000);
    expect((await act(id, { lock: null })).status).toBe(202);
    const locked = await act(id, { pause: null });
    expect(locked.status).toBe(409);
    expect(locked.body.conflictingRequest.message).toBe(`Instance ${id} is locked`);
    expect((await act(id, { unlock: null })).status).toBe(202);
    expect((await act('00000000-0000-0000-0000-000000000000', { reboot: { type: 'SOFT' } })).status).toBe(404);
    const unknown = await act(id, { dance: null });
    expect(unknown.status).toBe(400);
    expect(unknown.body.badRequest.message).toBe('There is no such action: dance');
    expect((await act(id, { migrate: null })).status).toBe(403);
  });

  it('resizes through RESIZE to VERIFY_RESIZE with the new flavor shown, then confirms to ACTIVE; revert restores the old flavor', async () => {
    const id = await activeServer();
    expect((await act(id, { resize: { flavorRef: '2' } })).status).toBe(202);
    expect(await show(id)).toMatchObject({ status: 'RESIZE', 'OS-EXT-STS:task_state': 'resize_migrating' });
    await advanceClock(sim, 1000);
    expect(await show(id)).toMatchObject({ status: 'VERIFY_RESIZE', 'OS-EXT-STS:vm_state': 'resized', flavor: { original_name: 'm1.small' } });
    expect((await act(id, { confirmResize: null })).status).toBe(204);
    await advanceClock(sim, 1000);
    expect(await show(id)).toMatchObject({ status: 'ACTIVE', flavor: { original_name: 'm1.small' } });
    expect((await act(id, { confirmResize: null })).body.conflictingRequest.message).toBe(`Cannot 'confirmResize' instance ${id} while it is in vm_state active`);

    expect((await act(id, { resize: { flavorRef: '3' } })).status).toBe(202);
    await advanceClock(sim, 1000);
    expect((await act(id, { revertResize: null })).status).toBe(202);
    await advanceClock(sim, 1000);
    expect(await show(id)).toMatchObject({ status: 'ACTIVE', flavor: { original_name: 'm1.small' } });
  });

  it('refuses a resize to the same or an unknown flavor (400)', async () => {
    const id = await activeServer();
    const same = await act(id, { resize: { flavorRef: (await show(id)).flavor.original_name === 'm1.tiny' ? '1' : '2' } });
    expect(same.body.badRequest.message).toBe('Resize requires a flavor change.');
    expect((await act(id, { resize: { flavorRef: '99' } })).body.badRequest.message).toBe('Unable to locate requested flavor.');
  });

  it('renames a server (PUT /servers/{id}) and replaces its metadata (PUT /servers/{id}/metadata)', async () => {
    const id = await activeServer();
    const renamed = await call(sim, 'PUT', `${SERVERS}/${id}`, { token: demo, version: '2.64', body: { server: { name: 'renamed' } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.server.name).toBe('renamed');
    const meta = await call(sim, 'PUT', `${SERVERS}/${id}/metadata`, { token: demo, version: '2.64', body: { metadata: { tier: 'web' } } });
    expect(meta).toMatchObject({ status: 200, body: { metadata: { tier: 'web' } } });
    expect(await show(id)).toMatchObject({ name: 'renamed', metadata: { tier: 'web' } });
    expect((await act(id, { 'os-stop': null })).status).toBe(202);
    const busy = await call(sim, 'PUT', `${SERVERS}/${id}/metadata`, { token: demo, version: '2.64', body: { metadata: {} } });
    expect(busy.status).toBe(409);
    expect(busy.body.conflictingRequest.message).toBe(`Cannot 'update metadata' instance ${id} while it is in task_state powering-off`);
  });
});
