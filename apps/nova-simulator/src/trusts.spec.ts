import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { advanceClock, boot, call, createGroup, login, shapeOf, type Reply } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

/** Keystone's OS-TRUST answers captured from the reference cloud (Zed), with the request that got them. */
const CAPTURES = join(__dirname, '..', '..', '..', 'libs', 'nova', 'src', 'testing', 'nova-samples', 'keystone-trusts');
interface Capture {
  request: string;
  status: number;
  body: any;
}
const capture = (name: string): Capture => JSON.parse(readFileSync(join(CAPTURES, `${name}.json`), 'utf8'));

/** The captured ids of the reference cloud, to put the simulator's in their place in messages. */
const REAL = (() => {
  const created = capture('trust-create').body.trust;
  return { trust: created.trust, trustor: created.trustor_user_id, trustee: created.trustee_user_id, project: created.project_id, trustId: created.id };
})();

/** The same status and Keystone error body as the capture, ids swapped for the simulator's. */
function expectCapturedError(reply: Reply, name: string, ids: Record<string, string> = {}): void {
  const c = capture(name);
  let message: string = c.body.error.message;
  for (const [real, ours] of Object.entries(ids)) message = message.split(real).join(ours);
  expect({ status: reply.status, body: reply.body }).toEqual({ status: c.status, body: { error: { ...c.body.error, message } } });
}

const sorted = (paths: string[]) => [...new Set(paths)].sort();

describe('Keystone trusts (OS-TRUST)', () => {
  let sim: RunningSimulator;
  let alt: string;
  let demo: string;
  let trellis: string;
  let admin: string;
  let ids: { altDemo: string; trellis: string; altProject: string; demoProject: string; viewer: string; role: (name: string) => string };

  const trustBody = (over: Record<string, unknown> = {}) => ({
    trust: { trustor_user_id: ids.altDemo, trustee_user_id: ids.trellis, project_id: ids.altProject, impersonation: true, roles: [{ name: 'member' }], ...over },
  });
  const createTrust = async (token = alt, over: Record<string, unknown> = {}) => call(sim, 'POST', '/identity/v3/OS-TRUST/trusts', { token, body: trustBody(over) });
  const trustAuth = (user: string, password: string, trustId: string) =>
    call(sim, 'POST', '/identity/v3/auth/tokens?nocatalog', {
      body: { auth: { identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password } } }, scope: { 'OS-TRUST:trust': { id: trustId } } } },
    });
  const newTrust = async (over: Record<string, unknown> = {}): Promise<string> => {
    const r = await createTrust(alt, over);
    if (r.status !== 201) throw new Error(`trust create failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.trust.id;
  };
  const trustToken = async (trustId: string): Promise<Reply> => trustAuth('trellis', 'service-secret', trustId);

  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    [alt, demo, trellis, admin] = await Promise.all([login(sim, 'alt_demo'), login(sim, 'demo'), login(sim, 'trellis'), login(sim, 'admin')]);
    const user = (name: string) => sim.state.identity.users.find((u) => u.name === name)!.id;
    ids = {
      altDemo: user('alt_demo'),
      trellis: user('trellis'),
      viewer: user('viewer'),
      altProject: sim.state.projectId('alt_demo'),
      demoProject: sim.state.projectId('demo'),
      role: (name) => sim.state.identity.roles.find((r) => r.name === name)!.id,
    };
  });
  afterAll(() => sim.close());

  it('has the service user trellis (admin, member, service, reader on service) and the reader-only viewer', async () => {
    const validate = async (token: string) => (await call(sim, 'GET', '/identity/v3/auth/tokens', { token: admin, headers: { 'X-Subject-Token': token } })).body.token;
    const t = await validate(trellis);
    expect(t.project.name).toBe('service');
    expect(t.roles.map((r: { name: string }) => r.name).sort()).toEqual(['admin', 'member', 'reader', 'service']);
    const v = await validate(await login(sim, 'viewer'));
    expect([v.project.name, v.roles.map((r: { name: string }) => r.name)]).toEqual(['demo', ['reader']]);
    const other = await startNovaSimulator({ buildDelayMs: 0, servicePassword: 'other-secret' });
    try {
      const auth = (password: string) =>
        call(other, 'POST', '/identity/v3/auth/tokens', { body: { auth: { identity: { methods: ['password'], password: { user: { name: 'trellis', domain: { id: 'default' }, password } } } } } });
      expect((await auth('other-secret')).status).toBe(201);
      expect((await auth('service-secret')).status).toBe(401);
      expect(other.state.identity.users.find((u) => u.name === 'trellis')!.id).toBe(ids.trellis);
    } finally {
      await other.close();
    }
  });

  it('creates a trust with the shape Keystone answers', async () => {
    const r = await createTrust();
    expect(r.status).toBe(201);
    expect(sorted(shapeOf(r.body))).toEqual(sorted(shapeOf(capture('trust-create').body)));
    const t = r.body.trust;
    expect(t).toMatchObject({
      trustor_user_id: ids.altDemo,
      trustee_user_id: ids.trellis,
      project_id: ids.altProject,
      impersonation: true,
      expires_at: null,
      remaining_uses: null,
      redelegation_count: 0,
      links: { self: `${sim.authUrl}/OS-TRUST/trusts/${t.id}` },
      roles_links: { self: `${sim.authUrl}/${t.id}/roles`, next: null, previous: null },
    });
    expect(t.id).toMatch(/^[0-9a-f]{32}$/);
    expect(t.roles).toEqual([{ id: ids.role('member'), name: 'member', domain_id: null, description: null, options: { immutable: true }, links: { self: `${sim.authUrl}/roles/${ids.role('member')}` } }]);
  });

  it('shows a trust to its trustor and trustee only', async () => {
    const id = await newTrust();
    for (const token of [alt, trellis]) {
      const r = await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token });
      expect(r.status).toBe(200);
      expect(sorted(shapeOf(r.body))).toEqual(sorted(shapeOf(capture('trust-get').body)));
      expect(r.body.trust.id).toBe(id);
    }
    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token: demo }), 'trust-get-by-other');
    const unknown = '0'.repeat(32);
    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${unknown}`, { token: trellis }), 'trust-get-unknown');
  });

  it('lists trusts by trustor or trustee, for that user only', async () => {
    const id = await newTrust();
    const byTrustor = await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts?trustor_user_id=${ids.altDemo}`, { token: alt });
    expect(byTrustor.status).toBe(200);
    expect(sorted(shapeOf(byTrustor.body))).toEqual(sorted(shapeOf(capture('trust-list-by-trustor').body)));
    expect(byTrustor.body.trusts.map((t: { id: string }) => t.id)).toContain(id);
    expect(byTrustor.body.links).toEqual({ next: null, self: `${sim.authUrl}/OS-TRUST/trusts?trustor_user_id=${ids.altDemo}`, previous: null });
    const byTrustee = await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts?trustee_user_id=${ids.trellis}`, { token: trellis });
    expect(sorted(shapeOf(byTrustee.body))).toEqual(sorted(shapeOf(capture('trust-list-by-trustee').body)));
    expect(byTrustee.body.trusts.every((t: { trustee_user_id: string }) => t.trustee_user_id === ids.trellis)).toBe(true);
    expect((await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts?trustor_user_id=${ids.trellis}`, { token: trellis })).body.trusts).toEqual([]);

    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts?trustor_user_id=${ids.altDemo}`, { token: demo }), 'trust-list-other-trustor');
    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts?trustee_user_id=${ids.trellis}`, { token: alt }), 'trust-list-other-trustee');
    expectCapturedError(await call(sim, 'GET', '/identity/v3/OS-TRUST/trusts', { token: alt }), 'trust-list-unfiltered');
    expect((await call(sim, 'GET', '/identity/v3/OS-TRUST/trusts', { token: admin })).status).toBe(200);
  });

  it('gives the trustee a token of the trust: the trustor (impersonation), its project, the delegated roles and those they imply', async () => {
    const id = await newTrust();
    const r = await trustToken(id);
    expect(r.status).toBe(201);
    const real = capture('auth-tokens-trust').body;
    expect(sorted(shapeOf(r.body))).toEqual(sorted(shapeOf(real)));
    expect(Object.keys(r.body.token)).toEqual(Object.keys(real.token));
    const t = r.body.token;
    expect(t.user).toMatchObject({ id: ids.altDemo, name: 'alt_demo' });
    expect(t.project).toMatchObject({ id: ids.altProject, name: 'alt_demo' });
    expect(t['OS-TRUST:trust']).toEqual({ id, trustor_user: { id: ids.altDemo }, trustee_user: { id: ids.trellis }, impersonation: true });
    expect(t.roles.map((x: { name: string }) => x.name)).toEqual(real.token.roles.map((x: { name: string }) => x.name));
    expect(t.roles[0]).toEqual({ id: ids.role('member'), name: 'member', domain_id: null, description: null, options: { immutable: true } });

    const token = r.headers.get('x-subject-token')!;
    const v = await call(sim, 'GET', '/identity/v3/auth/tokens?nocatalog', { token: trellis, headers: { 'X-Subject-Token': token } });
    expect(v.status).toBe(200);
    expect(sorted(shapeOf(v.body))).toEqual(sorted(shapeOf(capture('auth-tokens-trust-validate').body)));
    expect(v.body.token['OS-TRUST:trust'].id).toBe(id);
    // with the catalog, as a client that reads endpoints from its token needs
    const withCatalog = await trustAuth('trellis', 'service-secret', id);
    expect(withCatalog.status).toBe(201);
  });

  it("without impersonation the token is the trustee's", async () => {
    const id = await newTrust({ impersonation: false, roles: [{ name: 'member' }, { name: 'reader' }] });
    const r = await trustToken(id);
    expect(r.status).toBe(201);
    expect(sorted(shapeOf(r.body))).toEqual(sorted(shapeOf(capture('auth-tokens-trust-no-impersonation').body)));
    expect(r.body.token.user.name).toBe('trellis');
    expect(r.body.token.project.id).toBe(ids.altProject);
    expect(r.body.token['OS-TRUST:trust'].impersonation).toBe(false);
  });

  it("refuses the trust to anyone but its trustee, and an unknown trust, with Keystone's answers", async () => {
    const id = await newTrust();
    expectCapturedError(await trustAuth('demo', 'demo', id), 'auth-tokens-trust-wrong-trustee');
    expectCapturedError(await trustToken('0'.repeat(32)), 'auth-tokens-trust-unknown');
    expect((await trustAuth('trellis', 'wrong', id)).status).toBe(401);
  });

  it('deletes a trust (trustor only) and ends the tokens issued from it', async () => {
    const id = await newTrust();
    const token = (await trustToken(id)).headers.get('x-subject-token')!;
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(200);

    expectCapturedError(await call(sim, 'DELETE', `/identity/v3/OS-TRUST/trusts/${id}`, { token: demo }), 'trust-delete-by-other');
    const del = await call(sim, 'DELETE', `/identity/v3/OS-TRUST/trusts/${id}`, { token: alt });
    expect(del.status).toBe(capture('trust-delete').status);
    expect(del.body).toBe('');

    const real = capture('trust-get-deleted').body.error.message.match(/trust: (\w+)\./)[1];
    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token: trellis }), 'trust-get-deleted', { [real]: id });
    expectCapturedError(await call(sim, 'DELETE', `/identity/v3/OS-TRUST/trusts/${id}`, { token: alt }), 'trust-get-deleted', { [real]: id });
    expectCapturedError(
      await call(sim, 'GET', '/identity/v3/auth/tokens', { token: trellis, headers: { 'X-Subject-Token': token } }),
      'auth-tokens-trust-validate-deleted',
      { [real]: id },
    );
    expectCapturedError(await trustToken(id), 'auth-tokens-trust-deleted');
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(401);
  });

  it('lets an admin delete any trust', async () => {
    const id = await newTrust();
    expect((await call(sim, 'DELETE', `/identity/v3/OS-TRUST/trusts/${id}`, { token: admin })).status).toBe(204);
  });

  it("refuses trusts Keystone refuses, with Keystone's messages", async () => {
    const real = capture('trust-create').body.trust;
    const realRole = (name: string) => {
      const byName: Record<string, string> = { member: real.roles[0].id };
      // admin's id on the reference cloud, from its refusal
      byName.admin = capture('trust-create-unassigned-role').body.error.message.match(/role: (\w+)\./)[1];
      return byName[name];
    };
    expectCapturedError(await createTrust(alt, { roles: [{ name: 'admin' }] }), 'trust-create-unassigned-role', { [realRole('admin')]: ids.role('admin') });
    expectCapturedError(await createTrust(alt, { roles: [{ name: 'nosuchrole' }] }), 'trust-create-unknown-role-name');
    expectCapturedError(await createTrust(alt, { roles: [{ id: 'f'.repeat(32) }] }), 'trust-create-unknown-role-id');
    expectCapturedError(await createTrust(alt, { project_id: ids.demoProject }), 'trust-create-other-project', { [realRole('member')]: ids.role('member') });
    expectCapturedError(await createTrust(demo), 'trust-create-other-trustor');
    expectCapturedError(await createTrust(alt, { trustee_user_id: 'f'.repeat(32) }), 'trust-create-unknown-trustee');
    expectCapturedError(await createTrust(alt, { expires_at: '2020-01-01T00:00:00.000000Z' }), 'trust-create-expired');
    const viewer = await login(sim, 'viewer');
    const asViewer = (roles: unknown[]) =>
      call(sim, 'POST', '/identity/v3/OS-TRUST/trusts', {
        token: viewer,
        body: { trust: { trustor_user_id: ids.viewer, trustee_user_id: ids.trellis, project_id: ids.demoProject, impersonation: true, roles } },
      });
    expectCapturedError(await asViewer([{ name: 'member' }]), 'trust-create-reader-only', { [realRole('member')]: ids.role('member') });
    expect((await asViewer([{ name: 'reader' }])).status).toBe(201);
  });

  it('ends an expired trust: its auth is 401 and the trust is not found', async () => {
    const id = await newTrust({ expires_at: new Date(sim.state.now() + 60_000).toISOString() });
    expect((await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token: trellis })).body.trust.expires_at).toMatch(/^\d{4}-.*\.\d{6}Z$/);
    const token = (await trustToken(id)).headers.get('x-subject-token')!;
    await advanceClock(sim, 61_000);
    expectCapturedError(await trustToken(id), 'auth-tokens-trust-expired');
    const real = capture('trust-get-expired').body.error.message.match(/trust: (\w+)\./)[1];
    expectCapturedError(await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token: await login(sim, 'trellis') }), 'trust-get-expired', { [real]: id });
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(401);
  });

  it('counts remaining uses: a used-up trust authenticates no more', async () => {
    const id = await newTrust({ remaining_uses: 1 });
    expect((await trustToken(id)).status).toBe(201);
    expect((await trustToken(id)).status).toBe(401);
  });

  it('drops the trust when the trustor lost a delegated role: 403 on auth, its tokens end', async () => {
    const id = await newTrust();
    const token = (await trustToken(id)).headers.get('x-subject-token')!;
    sim.state.identity.setRoles(ids.altDemo, ids.altProject, ['reader']);
    try {
      const r = await trustToken(id);
      expect(r.status).toBe(403);
      expect(r.body.error.message).toBe('Trustee has no delegated roles.');
      expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(401);
    } finally {
      sim.state.identity.setRoles(ids.altDemo, ids.altProject, ['member']);
    }
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(200);
  });

  it("makes Nova treat a member's trust token as that member in the trust's project", async () => {
    const id = await newTrust();
    const token = (await trustToken(id)).headers.get('x-subject-token')!;
    const group = await createGroup(sim, token, 'anti-affinity');
    const booted = await boot(sim, { token, group });
    expect(booted.status).toBe(202);
    const server = (await call(sim, 'GET', `/compute/v2.1/servers/${booted.body.server.id}`, { token: alt, version: '2.64' })).body.server;
    expect(server).toMatchObject({ tenant_id: ids.altProject, user_id: ids.altDemo });
    const g = (await call(sim, 'GET', `/compute/v2.1/os-server-groups/${group}`, { token: alt, version: '2.64' })).body.server_group;
    expect(g).toMatchObject({ project_id: ids.altProject, user_id: ids.altDemo });

    const forced = await boot(sim, { token, zone: 'az1:host-1' });
    expect(forced.status).toBe(403);
    expect(forced.body.forbidden.message).toBe("Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.");
    expect((await call(sim, 'GET', '/compute/v2.1/os-hypervisors', { token })).status).toBe(403);
    // the trustee is an admin of its own project, yet the trust lends member only
    expect((await call(sim, 'GET', '/compute/v2.1/os-hypervisors', { token: trellis })).status).toBe(200);
  });

  it("gives an admin's trust of the admin role the admin's rights in Nova", async () => {
    const adminId = sim.state.identity.users.find((u) => u.name === 'admin')!.id;
    const r = await call(sim, 'POST', '/identity/v3/OS-TRUST/trusts', {
      token: admin,
      body: { trust: { trustor_user_id: adminId, trustee_user_id: ids.trellis, project_id: sim.state.projectId('admin'), impersonation: true, roles: [{ name: 'admin' }] } },
    });
    expect(r.status).toBe(201);
    const t = await trustToken(r.body.trust.id);
    expect(t.body.token.roles.map((x: { name: string }) => x.name)).toEqual(['admin', 'member', 'reader']);
    expect((await call(sim, 'GET', '/compute/v2.1/os-hypervisors', { token: t.headers.get('x-subject-token')! })).status).toBe(200);
  });

  it('forgets trusts on reset', async () => {
    const id = await newTrust();
    expect((await call(sim, 'POST', '/_sim/reset')).status).toBe(204);
    expect((await call(sim, 'GET', `/identity/v3/OS-TRUST/trusts/${id}`, { token: trellis })).status).toBe(404);
  });
});
