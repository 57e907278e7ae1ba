import { createTokenValidator } from './token-validator';
import { FakeOpenStack, adminSettings, sample } from '@trellis/nova/testing/fake-openstack';

describe('KeystoneTokenValidator', () => {
  let fake: FakeOpenStack;
  let clock: number;
  const now = () => clock;
  const expiresAt = '2030-01-01T01:00:00.000000Z';

  beforeEach(async () => {
    fake = await FakeOpenStack.start();
    clock = Date.parse('2030-01-01T00:00:00Z');
    fake.withKeystone({ now });
    fake.on('GET', '/identity/v3/auth/tokens', (req) => {
      const subject = req.headers['x-subject-token'];
      if (req.headers['x-auth-token'] !== fake.lastToken) return { status: 401 };
      if (subject === 'revoked') return { status: 404, body: { error: { code: 404, message: 'Could not find token: revoked.' } } };
      if (subject === 'unscoped') return { status: 200, body: { token: { expires_at: expiresAt, user: { id: 'u', name: 'x' }, roles: [] } } };
      const token = sample('keystone-auth-tokens.trimmed.json');
      delete token.catalog;
      token.expires_at = expiresAt;
      if (subject === 'member-token') token.roles = [{ id: 'r', name: 'member' }, { id: 'r2', name: 'reader' }];
      if (subject === 'demo-admin') token.project = { id: 'demo-id', name: 'demo', domain: { id: 'default' } };
      if (subject === 'system-admin' || subject === 'system-reader') {
        delete token.project;
        token.system = { all: true };
        if (subject === 'system-reader') token.roles = [{ id: 'r2', name: 'reader' }];
      }
      return { status: 200, body: { token }, headers: { 'X-Subject-Token': String(subject) } };
    });
  });
  afterEach(() => fake.close());

  const validator = (options = {}) => createTokenValidator(adminSettings(fake), { now, cwd: '/nonexistent', homeDir: '/nonexistent', ...options });

  it('validates with the service token and maps the admin role', async () => {
    const ctx = await validator().validate('caller-token');
    expect(ctx).toEqual({
      token: 'caller-token',
      userId: '15bff394acab4b30a165c22d87b444c6',
      userName: 'admin',
      projectId: 'e2c563566f1f4d059516dc24ae3da4da',
      projectName: 'admin',
      domainId: 'default',
      roles: ['admin', 'member', 'reader'],
      isAdmin: true,
      isProjectAdmin: true,
      systemScope: null,
      isAdminProject: true,
      expiresAt: new Date('2030-01-01T01:00:00Z'),
    });
    const call = fake.to('GET', '/identity/v3/auth/tokens')[0];
    expect(call.headers['x-auth-token']).toBe('token-1');
    expect(call.headers['x-subject-token']).toBe('caller-token');
  });

  it('is not admin without the admin role', async () => {
    const ctx = await validator().validate('member-token');
    expect(ctx).toMatchObject({ isAdmin: false, isProjectAdmin: false, isAdminProject: true });
  });

  it('makes the admin role a cloud admin only in the admin project, by name or id', async () => {
    expect(await validator().validate('demo-admin')).toMatchObject({ projectName: 'demo', isAdmin: false, isProjectAdmin: true, isAdminProject: false });
    expect(await validator({ adminProject: 'demo-id' }).validate('demo-admin')).toMatchObject({ isAdmin: true, isAdminProject: true });
    expect(await validator({ adminProject: 'service' }).validate('caller-token')).toMatchObject({ isAdmin: false, isProjectAdmin: true });
  });

  it('accepts a system-scoped token: no project, cloud admin with the admin role', async () => {
    expect(await validator().validate('system-admin')).toMatchObject({
      projectId: '',
      projectName: '',
      systemScope: 'all',
      isAdminProject: false,
      isProjectAdmin: false,
      isAdmin: true,
    });
    expect(await validator().validate('system-reader')).toMatchObject({ systemScope: 'all', isAdmin: false, roles: ['reader'] });
  });

  it('answers null for unknown, revoked and unscoped tokens', async () => {
    const v = validator();
    expect(await v.validate('revoked')).toBeNull();
    expect(await v.validate('unscoped')).toBeNull();
    expect(await v.validate('')).toBeNull();
  });

  it('answers null without asking Keystone for what cannot be a token (a 503 before, over RPC; found by the fuzz suite)', async () => {
    const v = validator();
    for (const token of ['tök€n', 'a\u0000b', 'line\nbreak', 'with space', ' ', 'x'.repeat(8193), '\ud800']) expect(await v.validate(token)).toBeNull();
    expect(fake.to('GET', '/identity/v3/auth/tokens')).toHaveLength(0);
    expect(await v.validate(`gAAAAA${'x'.repeat(8186)}`)).not.toBeNull();
  });

  it('caches a valid answer until the token expires', async () => {
    const v = validator({ maxCacheAgeMs: 24 * 3_600_000 });
    await v.validate('caller-token');
    clock += 59 * 60_000;
    expect(await v.validate('caller-token')).not.toBeNull();
    expect(fake.to('GET', '/identity/v3/auth/tokens')).toHaveLength(1);
    clock += 2 * 60_000;
    expect(await v.validate('caller-token')).toBeNull();
    expect(fake.to('GET', '/identity/v3/auth/tokens')).toHaveLength(2);
  });

  it('asks again after the maximum cache age, and keeps the cache bounded', async () => {
    const v = validator({ maxCacheAgeMs: 60_000, cacheSize: 2 });
    await v.validate('t1');
    await v.validate('t2');
    await v.validate('t3');
    await v.validate('t3');
    await v.validate('t1');
    expect(fake.to('GET', '/identity/v3/auth/tokens').map((r) => r.headers['x-subject-token'])).toEqual(['t1', 't2', 't3', 't1']);
    clock += 61_000;
    await v.validate('t1');
    expect(fake.to('GET', '/identity/v3/auth/tokens')).toHaveLength(5);
  });

  it('remembers at most cacheSize tokens however many it sees, the most recently used', async () => {
    const v = validator({ cacheSize: 5 });
    const tokens = Array.from({ length: 15 }, (_, i) => `t${i}`);
    for (const t of tokens) await v.validate(t);
    expect(v.size).toBe(5);
    await v.validate('t3'); // forgotten: asked again
    for (const t of ['t12', 't13', 't14']) await v.validate(t); // remembered: not asked
    const asked = fake.to('GET', '/identity/v3/auth/tokens').map((r) => r.headers['x-subject-token']);
    expect(asked).toEqual([...tokens, 't3']);
    expect(v.size).toBe(5);
  });

  it('renews its own token once when Keystone rejects it', async () => {
    const v = validator();
    await v.validate('caller-token');
    fake.withKeystone({ now });
    fake.on('GET', '/identity/v3/auth/tokens', (req) =>
      req.headers['x-auth-token'] === 'token-2' ? { status: 200, body: { token: { ...sample('keystone-auth-tokens.trimmed.json'), expires_at: expiresAt } } } : { status: 401 },
    );
    // the service token-1 is now refused; the validator re-authenticates and gets token-2
    expect(await v.validate('other-token')).not.toBeNull();
    expect(fake.to('POST', '/identity/v3/auth/tokens')).toHaveLength(2);
  });
});
