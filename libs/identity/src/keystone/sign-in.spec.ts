import { createPasswordSignIn } from './sign-in';
import { FakeOpenStack, adminSettings, recordingSleep } from '../../../nova/src/testing/fake-openstack';

describe('KeystonePasswordSignIn', () => {
  let fake: FakeOpenStack;
  const PERSON = { username: 'demo', password: 'secret', project: 'demo', domain: 'Default' };

  beforeEach(async () => {
    fake = await FakeOpenStack.start();
    fake.withKeystone({ now: () => Date.parse('2030-01-01T00:00:00Z') });
  });
  afterEach(() => fake.close());

  const signIn = () => createPasswordSignIn(adminSettings(fake), { cwd: '/nonexistent', homeDir: '/nonexistent', sleep: recordingSleep().sleep });

  it("asks the service's Keystone for a token scoped to the person's project, with the person's password", async () => {
    expect(await signIn().signIn(PERSON)).toEqual({ token: 'token-1', expiresAt: new Date('2030-01-01T01:00:00Z') });
    const [call] = fake.to('POST', '/identity/v3/auth/tokens');
    expect(call.body).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'secret' } } },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    });
  });

  it.each([401, 403, 404])('answers null when Keystone refuses the credentials (%i)', async (status) => {
    fake.on('POST', '/identity/v3/auth/tokens', () => ({ status, body: { error: { code: status, message: 'The request you have made requires authentication.' } } }));
    expect(await signIn().signIn(PERSON)).toBeNull();
  });

  it('throws when Keystone does not answer as it should (a 500 after the retries), so the caller can say it is unavailable', async () => {
    fake.on('POST', '/identity/v3/auth/tokens', () => ({ status: 500, body: { error: { code: 500, message: 'boom' } } }));
    await expect(signIn().signIn(PERSON)).rejects.toThrow(/500/);
  });
});
