import { call, login } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const passwordAuth = (user: Record<string, unknown>, scope?: unknown) => ({
  auth: { identity: { methods: ['password'], password: { user } }, ...(scope === undefined ? {} : { scope }) },
});

describe('Keystone v3', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0, clusteringUrl: 'http://127.0.0.1:9999' });
  });
  afterAll(() => sim.close());

  it('issues a token in X-Subject-Token with the sample body shape', async () => {
    const r = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: passwordAuth({ name: 'admin', domain: { name: 'Default' }, password: 'admin' }, { project: { name: 'admin', domain: { name: 'Default' } } }),
    });
    expect(r.status).toBe(201);
    const token = r.headers.get('x-subject-token')!;
    expect(token).toMatch(/^gAAAAA/);
    const t = r.body.token;
    expect(t.methods).toEqual(['password']);
    expect(Date.parse(t.expires_at)).toBeGreaterThan(Date.now());
    expect(t.project).toEqual({ domain: { id: 'default', name: 'Default' }, id: sim.state.projectId('admin'), name: 'admin' });
    expect(t.project.id).toMatch(/^[0-9a-f]{32}$/);
    expect(t.user).toMatchObject({ name: 'admin', domain: { id: 'default', name: 'Default' }, password_expires_at: null });
    expect(t.roles.map((x: { name: string }) => x.name).sort()).toEqual(['admin', 'member', 'reader']);
    const compute = t.catalog.find((c: { type: string }) => c.type === 'compute');
    expect(compute.name).toBe('nova');
    expect(compute.endpoints.map((e: { interface: string }) => e.interface).sort()).toEqual(['admin', 'internal', 'public']);
    expect(compute.endpoints.every((e: { region: string; url: string }) => e.region === 'RegionOne' && e.url === sim.computeUrl)).toBe(true);
    expect(t.catalog.map((c: { type: string }) => c.type)).toEqual(expect.arrayContaining(['identity', 'compute', 'clustering']));
    expect(t.catalog.find((c: { type: string }) => c.type === 'clustering').endpoints[0].url).toBe('http://127.0.0.1:9999');
  });

  it('keeps project ids stable across restarts and takes the configured passwords', async () => {
    const other = await startNovaSimulator({ buildDelayMs: 0, demoPassword: 'other-demo', adminPassword: 'other-admin' });
    try {
      expect(other.state.projectId('demo')).toBe(sim.state.projectId('demo'));
      expect(other.state.projectId('demo')).not.toBe(other.state.projectId('alt_demo'));
      const auth = async (name: string, password: string) =>
        (await call(other, 'POST', '/identity/v3/auth/tokens', { body: passwordAuth({ name, domain: { name: 'Default' }, password }) })).status;
      expect(await auth('demo', 'other-demo')).toBe(201);
      expect(await auth('alt_demo', 'other-demo')).toBe(201);
      expect(await auth('admin', 'other-admin')).toBe(201);
      expect(await auth('demo', 'demo')).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('accepts user and project by id, and scopes an unscoped request to the default project', async () => {
    const demoUser = sim.state.identity.users.find((u) => u.name === 'demo')!;
    const byId = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: passwordAuth({ id: demoUser.id, password: 'demo' }, { project: { id: sim.state.projectId('demo') } }),
    });
    expect(byId.status).toBe(201);
    expect(byId.body.token.roles.map((x: { name: string }) => x.name).sort()).toEqual(['member', 'reader']);
    const unscoped = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: passwordAuth({ name: 'alt_demo', domain: { id: 'default' }, password: 'demo' }),
    });
    expect(unscoped.status).toBe(201);
    expect(unscoped.body.token.project.name).toBe('alt_demo');
  });

  it('lets admin scope to demo but not demo to admin', async () => {
    const adminOnDemo = await login(sim, 'admin', 'demo');
    const v = await call(sim, 'GET', '/identity/v3/auth/tokens', { token: adminOnDemo, headers: { 'X-Subject-Token': adminOnDemo } });
    expect(v.body.token.project.name).toBe('demo');
    expect(v.body.token.roles.map((x: { name: string }) => x.name)).toContain('admin');
    const r = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: passwordAuth({ name: 'demo', domain: { name: 'Default' }, password: 'demo' }, { project: { name: 'admin', domain: { name: 'Default' } } }),
    });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/has no access to project/);
  });

  it.each([
    ['a wrong password', passwordAuth({ name: 'demo', domain: { name: 'Default' }, password: 'nope' }), 401],
    ['an unknown user', passwordAuth({ name: 'nobody', domain: { name: 'Default' }, password: 'x' }), 401],
    ['an unknown project', passwordAuth({ name: 'demo', domain: { name: 'Default' }, password: 'demo' }, { project: { id: 'f'.repeat(32) } }), 401],
    ['a user name without domain', passwordAuth({ name: 'demo', password: 'demo' }), 400],
    ['no identity', { auth: {} }, 400],
    ['an unsupported method', { auth: { identity: { methods: ['totp'], totp: {} } } }, 401],
  ])('rejects %s', async (_what, body, status) => {
    const r = await call(sim, 'POST', '/identity/v3/auth/tokens', { body });
    expect(r.status).toBe(status);
    expect(r.body.error.code).toBe(status);
    expect(typeof r.body.error.message).toBe('string');
  });

  it('answers a malformed JSON body with 400', async () => {
    const r = await call(sim, 'POST', '/identity/v3/auth/tokens', { body: '{"auth": ' });
    expect(r.status).toBe(400);
    expect(r.body.error.title).toBe('Bad Request');
  });

  it('validates tokens: 200 for a valid subject, 404 for an unknown one, 401 without a valid X-Auth-Token', async () => {
    const admin = await login(sim, 'admin');
    const demo = await login(sim, 'demo');
    const ok = await call(sim, 'GET', '/identity/v3/auth/tokens', { token: admin, headers: { 'X-Subject-Token': demo } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-subject-token')).toBe(demo);
    expect(ok.body.token.user.name).toBe('demo');
    const unknown = await call(sim, 'GET', '/identity/v3/auth/tokens', { token: admin, headers: { 'X-Subject-Token': 'gAAAAAnope' } });
    expect(unknown.status).toBe(404);
    const noAuth = await call(sim, 'GET', '/identity/v3/auth/tokens', { headers: { 'X-Subject-Token': demo } });
    expect(noAuth.status).toBe(401);
    const badAuth = await call(sim, 'GET', '/identity/v3/auth/tokens', { token: 'bogus', headers: { 'X-Subject-Token': demo } });
    expect(badAuth.status).toBe(401);
  });

  it('expires tokens through the test hooks: 401 on compute, 404 on validation', async () => {
    const admin = await login(sim, 'admin');
    const demo = await login(sim, 'demo');
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token: demo })).status).toBe(200);
    const e = await call(sim, 'POST', '/_sim/tokens/expire', { body: { token: demo } });
    expect(e.status).toBe(200);
    const after = await call(sim, 'GET', '/compute/v2.1/servers', { token: demo });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toBe('The request you have made requires authentication.');
    expect(after.headers.get('www-authenticate')).toContain(sim.authUrl);
    expect((await call(sim, 'GET', '/identity/v3/auth/tokens', { token: admin, headers: { 'X-Subject-Token': demo } })).status).toBe(404);

    const all = await call(sim, 'POST', '/_sim/tokens/expire-all');
    expect(all.status).toBe(200);
    expect((await call(sim, 'GET', '/compute/v2.1/os-server-groups', { token: admin })).status).toBe(401);
    expect((await call(sim, 'GET', '/image/v2/images', { token: admin })).status).toBe(401);
  });

  it('issues tokens with the configured lifetime', async () => {
    expect((await call(sim, 'POST', '/_sim/config', { body: { token_lifetime_seconds: 60 } })).status).toBe(200);
    const r = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: passwordAuth({ name: 'demo', domain: { name: 'Default' }, password: 'demo' }),
    });
    const t = r.body.token;
    expect(Date.parse(t.expires_at) - Date.parse(t.issued_at)).toBe(60_000);
    await call(sim, 'POST', '/_sim/config', { body: { token_lifetime_seconds: 86400 } });
  });

  it('authenticates with an application credential (by id, and by name + user)', async () => {
    const demo = await login(sim, 'demo');
    const userId = sim.state.identity.users.find((u) => u.name === 'demo')!.id;
    const created = await call(sim, 'POST', `/identity/v3/users/${userId}/application_credentials`, {
      token: demo,
      body: { application_credential: { name: 'trellis', secret: 's3cret' } },
    });
    expect(created.status).toBe(201);
    const cred = created.body.application_credential;
    expect(cred).toMatchObject({ name: 'trellis', secret: 's3cret', project_id: sim.state.projectId('demo') });

    const byId = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: { auth: { identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: 's3cret' } } } },
    });
    expect(byId.status).toBe(201);
    expect(byId.body.token.methods).toEqual(['application_credential']);
    expect(byId.body.token.project.name).toBe('demo');
    expect(byId.body.token.application_credential).toMatchObject({ id: cred.id, name: 'trellis' });
    const token = byId.headers.get('x-subject-token')!;
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token })).status).toBe(200);

    const byName = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { name: 'trellis', secret: 's3cret', user: { name: 'demo', domain: { name: 'Default' } } },
          },
        },
      },
    });
    expect(byName.status).toBe(201);

    const wrong = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: { auth: { identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: 'nope' } } } },
    });
    expect(wrong.status).toBe(401);
    const scoped = await call(sim, 'POST', '/identity/v3/auth/tokens', {
      body: {
        auth: {
          identity: { methods: ['application_credential'], application_credential: { id: cred.id, secret: 's3cret' } },
          scope: { project: { id: sim.state.projectId('demo') } },
        },
      },
    });
    expect(scoped.status).toBe(401);
    expect(scoped.body.error.message).toBe('Application credentials cannot request a scope.');
  });

  it('serves the identity version document', async () => {
    const r = await call(sim, 'GET', '/identity/v3');
    expect(r.status).toBe(200);
    expect(r.body.version).toMatchObject({ id: 'v3.14', status: 'stable' });
    expect(r.body.version.links[0].href).toBe(`${sim.authUrl}/`);
  });
});
