import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@trellis/common';
import { createSession, issueToken } from './session';
import { parseCatalog, parseKeystoneTime, selectEndpoint } from './keystone-session';
import { FakeOpenStack, adminSettings, openStackSettings, recordingSleep, sample } from '@trellis/nova/testing/fake-openstack';

describe('KeystoneSession', () => {
  let fake: FakeOpenStack;
  let clock: number;
  const now = () => clock;

  beforeEach(async () => {
    fake = await FakeOpenStack.start();
    clock = Date.parse('2030-01-01T00:00:00Z');
  });
  afterEach(() => fake.close());

  const session = (settings = adminSettings(fake), renewMarginMs = 60_000) =>
    createSession(settings, { now, sleep: recordingSleep().sleep, renewMarginMs, cwd: '/nonexistent', homeDir: '/nonexistent' }).session;

  it('authenticates with a password once and reuses the token', async () => {
    fake.withKeystone({ now });
    const s = session();
    const [a, b] = await Promise.all([s.token(), s.token()]);
    expect(a.value).toBe('token-1');
    expect(b.value).toBe('token-1');
    const posts = fake.to('POST', '/identity/v3/auth/tokens');
    expect(posts).toHaveLength(1);
    expect(posts[0].body.auth.identity.password.user).toEqual({ name: 'admin', domain: { name: 'Default' }, password: 'admin' });
    expect(posts[0].body.auth.scope).toEqual({ project: { name: 'admin', domain: { name: 'Default' } } });
  });

  it('issues a token for scripts', async () => {
    fake.withKeystone({ now });
    expect(await issueToken(adminSettings(fake), { cwd: '/nonexistent', homeDir: '/nonexistent' })).toBe('token-1');
  });

  it('authenticates with an application credential', async () => {
    fake.withKeystone({ now });
    const s = session(openStackSettings({ authUrl: fake.authUrl, applicationCredentialId: 'ac', applicationCredentialSecret: 'sec' }));
    await s.token();
    expect(fake.to('POST', '/identity/v3/auth/tokens')[0].body).toEqual({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'ac', secret: 'sec' } } },
    });
  });

  it('authenticates with the clouds.yaml entry OS_CLOUD names', async () => {
    fake.withKeystone({ now });
    const file = join(mkdtempSync(join(tmpdir(), 'trellis-nova-')), 'clouds.yaml');
    writeFileSync(
      file,
      `clouds:\n  fake:\n    auth:\n      auth_url: ${fake.authUrl}\n      username: demo\n      password: demo\n      project_name: demo\n      user_domain_name: Default\n      project_domain_name: Default\n`,
    );
    await session(openStackSettings({ cloud: 'fake', cloudsFile: file })).token();
    expect(fake.to('POST', '/identity/v3/auth/tokens')[0].body.auth.identity.password.user.name).toBe('demo');
  });

  it('renews the token a margin before it expires', async () => {
    fake.withKeystone({ now, lifetimeMs: 3_600_000 });
    const s = session(adminSettings(fake), 60_000);
    expect((await s.token()).value).toBe('token-1');
    clock += 3_600_000 - 61_000;
    expect((await s.token()).value).toBe('token-1');
    clock += 2_000;
    expect((await s.token()).value).toBe('token-2');
  });

  it('renews a short-lived token at half its lifetime at the latest', async () => {
    fake.withKeystone({ now, lifetimeMs: 10_000 });
    const s = session(adminSettings(fake), 60_000);
    await s.token();
    clock += 4_000;
    expect((await s.token()).value).toBe('token-1');
    clock += 1_500;
    expect((await s.token()).value).toBe('token-2');
  });

  it('authenticates again exactly once when a service answers 401', async () => {
    fake.withKeystone({ now });
    fake.on('GET', '/thing', (req) => (req.headers['x-auth-token'] === 'token-2' ? { status: 200, body: { ok: 1 } } : { status: 401 }));
    const s = session();
    await s.token();
    const res = await s.request({ service: 'compute', operation: 'test.get', method: 'GET', url: `${fake.url}/thing`, idempotent: true });
    expect(res.body).toEqual({ ok: 1 });
    expect(fake.to('POST', '/identity/v3/auth/tokens')).toHaveLength(2);
  });

  it('pings Keystone for readiness without a token, naming why it does not answer', async () => {
    fake.on('GET', '/identity/v3', () => ({ status: 200, body: { version: { id: 'v3.14' } } }));
    await expect(session().ping(1000)).resolves.toBeUndefined();
    expect(fake.to('POST', '/identity/v3/auth/tokens')).toHaveLength(0);
    fake.on('GET', '/identity/v3', () => ({ status: 503 }));
    await expect(session().ping(1000)).rejects.toThrow('unavailable (HTTP 503)');
    fake.on('GET', '/identity/v3', () => 'hang');
    await expect(session().ping(200)).rejects.toThrow('unavailable (no answer within 200 ms)');
    // nothing listens on port 1; the message names the code, not the address
    await expect(session(adminSettings(fake, { authUrl: 'http://127.0.0.1:1/identity/v3' })).ping(1000)).rejects.toThrow(/^unavailable \(ECONNREFUSED\)$/);
  });

  it('gives up after one re-authentication', async () => {
    fake.withKeystone({ now });
    fake.on('GET', '/thing', () => ({ status: 401, body: { error: { message: 'The request you have made requires authentication.' } } }));
    const error = await session()
      .request({ service: 'compute', operation: 'test.get', method: 'GET', url: `${fake.url}/thing`, idempotent: true })
      .catch((e) => e);
    expect(error.status).toBe(401);
    expect(error.message).toContain("a fresh token for user 'admin' (project 'admin') was rejected too");
    expect(fake.to('POST', '/identity/v3/auth/tokens')).toHaveLength(2);
    expect(fake.to('GET', '/thing')).toHaveLength(2);
  });

  it('explains rejected credentials without repeating them', async () => {
    fake.on('POST', '/identity/v3/auth/tokens', () => ({ status: 401, body: { error: { code: 401, message: 'The request you have made requires authentication.' } } }));
    const error = await session(adminSettings(fake, { password: 'hunter2' })).token().catch((e) => e);
    expect(error.message).toBe(
      `Keystone at ${fake.authUrl} refused user 'admin' (project 'admin') from environment: The request you have made requires authentication. (POST /identity/v3/auth/tokens answered 401)`,
    );
    expect(error.message).not.toContain('hunter2');
    expect(fake.to('POST', '/identity/v3/auth/tokens')).toHaveLength(1);
  });

  it('picks the compute endpoint by interface and region, or the explicit override', async () => {
    fake.withKeystone({ now });
    expect(await session().endpoint('compute')).toBe(fake.computeUrl);
    expect(await session(adminSettings(fake, { interface: 'internal' })).endpoint('compute')).toBe(`${fake.url}/internal-compute/v2.1`);
    expect(await session(adminSettings(fake, { regionName: 'RegionTwo' })).endpoint('compute')).toBe(`${fake.url}/region-two-compute/v2.1`);
    expect(await session(adminSettings(fake, { computeEndpoint: 'http://elsewhere:8774/v2.1/' })).endpoint('compute')).toBe('http://elsewhere:8774/v2.1');
  });
});

describe('catalog', () => {
  const catalog = parseCatalog(sample('keystone-auth-tokens.trimmed.json').catalog);

  it('reads the sample catalog', () => {
    expect(selectEndpoint(catalog, 'compute', 'public', 'RegionOne')).toBe('http://127.0.0.1:8774/v2.1');
    expect(selectEndpoint(catalog, 'identity', 'public', null)).toBe('http://127.0.0.1:5000/v3');
  });

  it('names the setting to change when nothing matches', () => {
    expect(() => selectEndpoint(catalog, 'compute', 'public', 'RegionX')).toThrow(ConfigError);
    expect(() => selectEndpoint(catalog, 'compute', 'public', 'RegionX')).toThrow(
      "OS_REGION_NAME 'RegionX' has no compute endpoint (the catalog offers: public/RegionOne http://127.0.0.1:8774/v2.1)",
    );
    expect(() => selectEndpoint(catalog, 'compute', 'internal', 'RegionOne')).toThrow("OS_INTERFACE 'internal' matches no compute endpoint");
    expect(() => selectEndpoint(catalog, 'clustering', 'public', null)).toThrow("no 'clustering' service");
  });

  it('parses Keystone times with microseconds and without a zone as UTC', () => {
    expect(parseKeystoneTime('2026-11-22T23:20:59.000000Z')).toBe(Date.parse('2026-11-22T23:20:59Z'));
    expect(parseKeystoneTime('2026-11-22T23:20:59.123456')).toBe(Date.parse('2026-11-22T23:20:59.123Z'));
  });
});
