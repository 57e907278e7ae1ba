import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@trellis/common';
import { authRequestBody, normaliseAuthUrl, resolveCredentials } from './credentials';
import { openStackSettings } from '@trellis/nova/testing/fake-openstack';

const password = openStackSettings({
  authUrl: 'http://keystone:5000/v3',
  username: 'admin',
  password: 'secret',
  userDomainName: 'Default',
  projectName: 'admin',
  projectDomainName: 'Default',
});

const noFiles = { cwd: '/nonexistent-cwd', homeDir: '/nonexistent-home', readFile: () => null };
/** reads real files, but never the current directory's or the real home directory's */
const explicitFileOnly = { cwd: '/nonexistent-cwd', homeDir: '/nonexistent-home' };

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'trellis-nova-'));
}

describe('resolveCredentials', () => {
  it('resolves password auth and builds the Keystone body with a project scope', () => {
    const c = resolveCredentials(password, noFiles);
    expect(c.method).toBe('password');
    expect(authRequestBody(c)).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'secret' } } },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    });
  });

  it('uses ids when they are given', () => {
    const c = resolveCredentials(openStackSettings({ authUrl: 'http://k/v3', userId: 'u1', password: 'p', projectId: 'p1' }), noFiles);
    expect(authRequestBody(c)).toEqual({
      auth: { identity: { methods: ['password'], password: { user: { id: 'u1', password: 'p' } } }, scope: { project: { id: 'p1' } } },
    });
  });

  it("puts a project named without a domain into the user's domain", () => {
    const c = resolveCredentials({ ...password, projectDomainName: null, userDomainName: null, userDomainId: 'default' }, noFiles);
    expect(authRequestBody(c).auth).toMatchObject({ scope: { project: { name: 'admin', domain: { id: 'default' } } } });
  });

  it.each([
    [{ password: null }, 'configuration error: OS_PASSWORD is required for password auth'],
    [{ username: null }, 'OS_USERNAME or OS_USER_ID is required for password auth'],
    [{ userDomainName: null }, 'OS_USER_DOMAIN_NAME or OS_USER_DOMAIN_ID is required with OS_USERNAME'],
    [{ projectName: null }, 'OS_PROJECT_NAME or OS_PROJECT_ID is required for password auth'],
    [{ projectDomainName: null, userDomainName: null, userId: 'u' }, 'OS_PROJECT_DOMAIN_NAME or OS_PROJECT_DOMAIN_ID is required'],
    [{ authUrl: null }, 'OS_AUTH_URL is required'],
    [{ authType: 'token' }, "OS_AUTH_TYPE 'token' is not supported"],
    [{ computeApiVersion: '3' }, 'OS_COMPUTE_API_VERSION must look like 2.X'],
  ])('names the missing or bad setting (%j)', (override, message) => {
    expect(() => resolveCredentials({ ...password, ...override }, noFiles)).toThrow(ConfigError);
    expect(() => resolveCredentials({ ...password, ...override }, noFiles)).toThrow(message);
  });

  it('resolves an application credential by id without a scope', () => {
    const c = resolveCredentials(
      openStackSettings({ authUrl: 'http://k:5000', applicationCredentialId: 'ac1', applicationCredentialSecret: 's3' }),
      noFiles,
    );
    expect(c.method).toBe('application_credential');
    expect(c.authUrl).toBe('http://k:5000/v3');
    expect(authRequestBody(c)).toEqual({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'ac1', secret: 's3' } } },
    });
  });

  it('resolves a named application credential with its user', () => {
    const c = resolveCredentials(
      openStackSettings({
        authUrl: 'http://k/v3',
        authType: 'v3applicationcredential',
        applicationCredentialName: 'trellis',
        applicationCredentialSecret: 's3',
        username: 'svc',
        userDomainId: 'default',
      }),
      noFiles,
    );
    expect(authRequestBody(c)).toEqual({
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { name: 'trellis', secret: 's3', user: { name: 'svc', domain: { id: 'default' } } },
        },
      },
    });
  });

  it('asks for the secret of an application credential', () => {
    expect(() =>
      resolveCredentials(openStackSettings({ authUrl: 'http://k/v3', authType: 'v3applicationcredential', applicationCredentialId: 'x' }), noFiles),
    ).toThrow('OS_APPLICATION_CREDENTIAL_SECRET is required for application-credential auth');
  });

  it('reads the cloud named by OS_CLOUD from the file OS_CLIENT_CONFIG_FILE names', () => {
    const dir = tempDir();
    const file = join(dir, 'my-clouds.yaml');
    writeFileSync(
      file,
      `clouds:
  lab:
    auth:
      auth_url: http://lab:5000
      username: demo
      password: demo-pass
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionTwo
    interface: internal
    compute_api_version: 2.10
`,
    );
    const c = resolveCredentials(openStackSettings({ cloud: 'lab', cloudsFile: file }), explicitFileOnly);
    expect(c).toMatchObject({
      method: 'password',
      authUrl: 'http://lab:5000/v3',
      regionName: 'RegionTwo',
      interface: 'internal',
      computeApiVersion: '2.10',
      password: 'demo-pass',
      user: { name: 'demo', domainName: 'Default' },
    });
    expect(c.source).toContain(file);
  });

  it('looks in ./clouds.yaml, then ~/.config/openstack/clouds.yaml, and lets OS_* values win over the file', () => {
    const cwd = tempDir();
    const home = tempDir();
    writeFileSync(join(cwd, 'clouds.yaml'), 'clouds:\n  other:\n    auth:\n      auth_url: http://other:5000/v3\n');
    mkdirSync(join(home, '.config/openstack'), { recursive: true });
    writeFileSync(
      join(home, '.config/openstack/clouds.yaml'),
      `clouds:
  prod:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://prod:5000/v3/
      application_credential_id: from-file
      application_credential_secret: file-secret
`,
    );
    const c = resolveCredentials(openStackSettings({ cloud: 'prod', applicationCredentialSecret: 'env-secret' }), { cwd, homeDir: home });
    expect(c).toMatchObject({ method: 'application_credential', applicationCredentialId: 'from-file', secret: 'env-secret', authUrl: 'http://prod:5000/v3' });
  });

  it('says which files it looked at when the cloud is not defined', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'clouds.yaml'), 'clouds:\n  other: {}\n');
    expect(() => resolveCredentials(openStackSettings({ cloud: 'missing' }), { cwd, homeDir: '/nonexistent-home' })).toThrow(
      /OS_CLOUD 'missing' is not defined in any clouds.yaml \(looked at: .*clouds.yaml \(no cloud 'missing'\)/,
    );
  });

  it('names the clouds.yaml field when the cloud lacks a value', () => {
    const file = join(tempDir(), 'clouds.yaml');
    writeFileSync(file, 'clouds:\n  lab:\n    auth:\n      auth_url: http://lab/v3\n      username: u\n      user_domain_name: D\n      project_name: p\n');
    expect(() => resolveCredentials(openStackSettings({ cloud: 'lab', cloudsFile: file }), explicitFileOnly)).toThrow(
      /OS_PASSWORD \(or auth.password in clouds.yaml .*\) is required for password auth/,
    );
  });

  it('reports an explicit clouds file that does not exist', () => {
    expect(() => resolveCredentials(openStackSettings({ cloud: 'lab', cloudsFile: '/nonexistent/clouds.yaml' }))).toThrow(
      'OS_CLIENT_CONFIG_FILE names /nonexistent/clouds.yaml, which does not exist',
    );
  });
});

describe('normaliseAuthUrl', () => {
  it.each([
    ['http://k:5000', 'http://k:5000/v3'],
    ['http://k:5000/', 'http://k:5000/v3'],
    ['http://k:5000/v3/', 'http://k:5000/v3'],
    ['http://sim:8780/identity/v3', 'http://sim:8780/identity/v3'],
    ['https://cloud.example/identity', 'https://cloud.example/identity/v3'],
  ])('%s → %s', (raw, expected) => expect(normaliseAuthUrl(raw)).toBe(expected));

  it('refuses Keystone v2.0', () => {
    expect(() => normaliseAuthUrl('http://k:5000/v2.0')).toThrow('needs the v3 API');
  });
});
