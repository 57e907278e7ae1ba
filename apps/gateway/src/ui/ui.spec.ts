import type { PasswordSignInRequest } from '@trellis/identity';
import { startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

/** Keystone for the sign-in: alice's password gives alice's token; `down` answers like an unreachable Keystone. */
class FakeSignIn {
  readonly asked: PasswordSignInRequest[] = [];
  down = false;
  async signIn(request: PasswordSignInRequest) {
    this.asked.push(request);
    if (this.down) throw new Error('connect ECONNREFUSED');
    return request.username === 'alice' && request.password === 'right' ? { token: TOKENS.alice, expiresAt: new Date() } : null;
  }
}

describe('the web page at /ui', () => {
  let h: GatewayHarness;
  const keystone = new FakeSignIn();
  beforeAll(async () => {
    h = await startGatewayHarness({ signIn: keystone });
  });
  afterAll(() => h?.close());

  const expectPageHeaders = (res: { headers: Record<string, string> }) => {
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'self';/);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  };

  it('sends /ui to /ui/, where the page is, without a token', async () => {
    const redirect = await h.http().get('/ui');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('ui/');
    const page = await h.http().get('/ui/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script type="module" src="app.js"></script>');
    expectPageHeaders(page);
  });

  it.each([
    ['app.js', 'text/javascript; charset=utf-8'],
    ['style.css', 'text/css; charset=utf-8'],
    ['icon.svg', 'image/svg+xml'],
  ])('serves %s as %s, revalidated by its ETag', async (file, type) => {
    const res = await h.http().get(`/ui/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe('no-cache');
    expectPageHeaders(res);
    const again = await h.http().get(`/ui/${file}`).set('If-None-Match', res.headers.etag);
    expect(again.status).toBe(304);
  });

  it('has every module the page imports, and nothing it does not serve', async () => {
    const app = (await h.http().get('/ui/app.js')).text;
    for (const [, module] of app.matchAll(/from '\.\/([a-z-]+\.js)'/g)) expect((await h.http().get(`/ui/${module}`)).status).toBe(200);
    for (const path of ['/ui/tsconfig.web.json', '/ui/ui.controller.ts', '/ui/..%2Fui.controller.ts', '/ui/%2e%2e%2fbootstrap.ts']) {
      const res = await h.http().get(path);
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('ResourceNotFound');
    }
  });

  it('signs in with a password through Keystone: the token and whom it belongs to, never cached', async () => {
    const res = await h.http().post('/ui/session').send({ username: 'alice', password: 'right', project: 'alice-project' });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      token: TOKENS.alice,
      user: { id: 'alice-id', name: 'alice' },
      project: { name: 'alice-project' },
      roles: ['member'],
      sees_host_names: false,
    });
    expect(keystone.asked.at(-1)).toEqual({ username: 'alice', password: 'right', project: 'alice-project', domain: 'Default' });
  });

  it("says whom a pasted token belongs to (an admin of the project sees host names), and 401 for one Keystone refuses", async () => {
    const who = await h.http().get('/ui/session').set('X-Auth-Token', TOKENS.projectAdmin);
    expect(who.status).toBe(200);
    expect(who.headers['cache-control']).toBe('no-store');
    expect(who.body).toMatchObject({ user: { name: 'pat' }, sees_host_names: true });
    expect(who.body.token).toBeUndefined();
    for (const token of ['not-a-token', undefined]) {
      const req = h.http().get('/ui/session');
      const res = await (token ? req.set('X-Auth-Token', token) : req);
      expect(res.status).toBe(401);
      expect(res.body.error.type).toBe('HTTPUnauthorized');
    }
  });

  it('answers 401 naming the user and project when Keystone refuses the password, and 503 when it cannot be reached', async () => {
    const refused = await h.http().post('/ui/session').send({ username: 'alice', password: 's3cr3t-guess', project: 'p', domain: 'corp' });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe("Keystone refused user 'alice' in project 'p' (domain 'corp'): check the name, password and project.");
    expect(JSON.stringify(refused.body)).not.toContain('s3cr3t-guess');
    keystone.down = true;
    try {
      const down = await h.http().post('/ui/session').send({ username: 'alice', password: 'right', project: 'p' });
      expect(down.status).toBe(503);
      expect(down.body.error.type).toBe('ServiceUnavailable');
    } finally {
      keystone.down = false;
    }
  });

  it.each([
    [[], 'The request body must be a JSON object with username, password and project.'],
    [{ username: 'alice', project: 'p' }, "'password' is a required property"],
    [{ username: 'alice', password: 'x', project: 'p', tenant: 't' }, "Additional properties are not allowed ('tenant' was unexpected)"],
    [{ username: ' ', password: 'x', project: 'p' }, "The value for username must be a non-empty string of at most 1024 characters: ' '."],
    [{ username: 'alice', password: 7, project: 'p' }, "The value for password must be a non-empty string of at most 1024 characters: '***'."],
    [{ username: 'alice', password: 'x', project: 'p'.repeat(1025) }, `The value for project must be a non-empty string of at most 1024 characters: '${'p'.repeat(1025)}'.`],
  ])('refuses the sign-in body %j with a 400 naming the field, before asking Keystone', async (body, message) => {
    const before = keystone.asked.length;
    const res = await h.http().post('/ui/session').send(body as object);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(message);
    expect(keystone.asked.length).toBe(before);
  });
});

describe('the web page without a password sign-in configured', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  it('asks for a token instead', async () => {
    const res = await h.http().post('/ui/session').send({ username: 'alice', password: 'right', project: 'p' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('signs in with a token only');
  });
});
