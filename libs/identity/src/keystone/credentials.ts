import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError, type OpenStackSettings } from '@trellis/common';
import { parse as parseYaml } from 'yaml';

export type EndpointInterface = 'public' | 'internal' | 'admin';

export interface UserRef {
  id: string | null;
  name: string | null;
  domainId: string | null;
  domainName: string | null;
}

export interface ProjectScope {
  id: string | null;
  name: string | null;
  domainId: string | null;
  domainName: string | null;
}

interface CommonCredentials {
  /** Keystone v3 base URL, always ending in /v3 */
  authUrl: string;
  regionName: string | null;
  interface: EndpointInterface;
  computeEndpoint: string | null;
  computeApiVersion: string | null;
  /** where the values came from, for error messages: "environment" or "clouds.yaml <path> (cloud 'x')" */
  source: string;
}

export interface PasswordCredentials extends CommonCredentials {
  method: 'password';
  user: UserRef;
  password: string;
  project: ProjectScope;
  /**
   * scope the token to this Keystone trust instead of `project` (the user must be the trust's
   * trustee; the token's project and roles are the trust's)
   */
  trustId?: string | null;
}

export interface ApplicationCredentials extends CommonCredentials {
  method: 'application_credential';
  applicationCredentialId: string | null;
  applicationCredentialName: string | null;
  secret: string;
  /** needed only when the credential is named rather than given by id */
  user: UserRef | null;
}

/** Everything the Keystone session needs, resolved from OpenStackSettings and clouds.yaml. */
export type Credentials = PasswordCredentials | ApplicationCredentials;

/** Where clouds.yaml is looked for; injectable so tests never read the real home directory. */
export interface CredentialSources {
  cwd?: string;
  homeDir?: string;
  readFile?: (path: string) => string | null;
}

const PASSWORD_TYPES = ['password', 'v3password'];
const APP_CREDENTIAL_TYPES = ['application_credential', 'v3applicationcredential'];

/** The clouds.yaml fields Trellis reads, by the OpenStackSettings field they fill. */
const CLOUD_AUTH_FIELDS: Record<string, keyof OpenStackSettings> = {
  auth_url: 'authUrl',
  username: 'username',
  user_id: 'userId',
  password: 'password',
  user_domain_name: 'userDomainName',
  user_domain_id: 'userDomainId',
  project_name: 'projectName',
  tenant_name: 'projectName',
  project_id: 'projectId',
  tenant_id: 'projectId',
  project_domain_name: 'projectDomainName',
  project_domain_id: 'projectDomainId',
  application_credential_id: 'applicationCredentialId',
  application_credential_name: 'applicationCredentialName',
  application_credential_secret: 'applicationCredentialSecret',
};

function defaultReadFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError('OS_CLIENT_CONFIG_FILE', `could not read ${path}: ${(e as Error).message}`);
  }
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * The clouds.yaml entry named by OS_CLOUD, turned into settings. Only the explicit file
 * (OS_CLIENT_CONFIG_FILE) or the three standard paths are read; the first file that defines the
 * cloud wins.
 */
export function readCloudSettings(
  cloud: string,
  cloudsFile: string | null,
  sources: CredentialSources = {},
): { settings: Partial<OpenStackSettings>; path: string } {
  const cwd = sources.cwd ?? process.cwd();
  const home = sources.homeDir ?? homedir();
  const readFile = sources.readFile ?? defaultReadFile;
  const expand = (p: string) => (p.startsWith('~/') ? join(home, p.slice(2)) : isAbsolute(p) ? p : resolve(cwd, p));
  const candidates = cloudsFile
    ? [expand(cloudsFile)]
    : [join(cwd, 'clouds.yaml'), join(home, '.config/openstack/clouds.yaml'), '/etc/openstack/clouds.yaml'];

  const looked: string[] = [];
  for (const path of candidates) {
    const text = readFile(path);
    if (text === null) {
      looked.push(`${path} (missing)`);
      continue;
    }
    let doc: unknown;
    try {
      // failsafe keeps every scalar a string: compute_api_version 2.10 must not become 2.1
      doc = parseYaml(text, { schema: 'failsafe' });
    } catch (e) {
      throw new ConfigError('OS_CLOUD', `cannot be read: ${path} is not valid YAML (${(e as Error).message})`);
    }
    const entry = asRecord(asRecord(asRecord(doc)?.clouds)?.[cloud]);
    if (!entry) {
      looked.push(`${path} (no cloud '${cloud}')`);
      continue;
    }
    return { settings: cloudEntryToSettings(entry), path };
  }
  if (cloudsFile && looked.length === 1 && looked[0].endsWith('(missing)')) {
    throw new ConfigError('OS_CLIENT_CONFIG_FILE', `names ${candidates[0]}, which does not exist`);
  }
  throw new ConfigError('OS_CLOUD', `'${cloud}' is not defined in any clouds.yaml (looked at: ${looked.join(', ')})`);
}

function cloudEntryToSettings(entry: Record<string, unknown>): Partial<OpenStackSettings> {
  const out: Partial<Record<keyof OpenStackSettings, string>> = {};
  const auth = asRecord(entry.auth) ?? {};
  for (const [yamlKey, field] of Object.entries(CLOUD_AUTH_FIELDS)) {
    const value = nonEmpty(auth[yamlKey]);
    if (value !== null && out[field] === undefined) out[field] = value;
  }
  const authType = nonEmpty(entry.auth_type);
  if (authType) out.authType = authType;
  const regions = Array.isArray(entry.regions) ? entry.regions : [];
  const firstRegion = nonEmpty(regions[0]) ?? nonEmpty(asRecord(regions[0])?.name);
  const region = nonEmpty(entry.region_name) ?? firstRegion;
  if (region) out.regionName = region;
  const iface = nonEmpty(entry.interface) ?? nonEmpty(entry.endpoint_type);
  if (iface) out.interface = iface.replace(/URL$/, '');
  const computeVersion = nonEmpty(entry.compute_api_version);
  if (computeVersion) out.computeApiVersion = computeVersion;
  return out as Partial<OpenStackSettings>;
}

/** Keystone v3 base: accepts http://host:5000, .../v3 and .../v3/. */
export function normaliseAuthUrl(raw: string, variable = 'OS_AUTH_URL'): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(variable, `is not a valid URL: '${raw}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(variable, `must use http or https, got '${parsed.protocol}'`);
  }
  const base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  if (/\/v2(\.0)?$/.test(base)) throw new ConfigError(variable, `points at Keystone v2.0 (${raw}); Trellis needs the v3 API`);
  return /\/v3$/.test(base) ? base : `${base}/v3`;
}

/**
 * One Credentials object from the settings and, when OS_CLOUD is set, its clouds.yaml entry.
 * An OS_* value that is set wins over the same value in clouds.yaml, so a secret can stay out of
 * the file.
 */
export function resolveCredentials(settings: OpenStackSettings, sources: CredentialSources = {}): Credentials {
  let merged: OpenStackSettings = settings;
  let source = 'environment';
  if (settings.cloud) {
    const fromFile = readCloudSettings(settings.cloud, settings.cloudsFile, sources);
    source = `clouds.yaml ${fromFile.path} (cloud '${settings.cloud}')`;
    merged = { ...settings };
    for (const [key, value] of Object.entries(fromFile.settings) as Array<[keyof OpenStackSettings, string]>) {
      // interface always has a value ('public' by default), so the file's wins over the default only
      const settingIsDefault = key === 'interface' ? settings.interface === 'public' : settings[key] === null;
      if (settingIsDefault) (merged as unknown as Record<string, unknown>)[key] = value;
    }
  }

  const fieldName = (variable: string, yamlKey: string) => (settings.cloud ? `${variable} (or auth.${yamlKey} in ${source})` : variable);
  const missing = (variable: string, yamlKey: string, why: string) =>
    new ConfigError(fieldName(variable, yamlKey), `is required ${why}`);

  if (!merged.authUrl) {
    throw settings.cloud ? missing('OS_AUTH_URL', 'auth_url', 'to reach Keystone') : new ConfigError('OS_AUTH_URL', 'is required to reach Keystone (or set OS_CLOUD to a clouds.yaml entry)');
  }
  const authUrl = normaliseAuthUrl(merged.authUrl);
  const iface = merged.interface;
  if (!['public', 'internal', 'admin'].includes(iface)) {
    throw new ConfigError('OS_INTERFACE', `must be one of public, internal, admin, got '${iface}'`);
  }
  if (merged.computeApiVersion !== null && !/^2\.\d+$/.test(merged.computeApiVersion)) {
    throw new ConfigError('OS_COMPUTE_API_VERSION', `must look like 2.X, got '${merged.computeApiVersion}'`);
  }
  const common: CommonCredentials = {
    authUrl,
    regionName: merged.regionName,
    interface: iface as EndpointInterface,
    computeEndpoint: merged.computeEndpoint ? merged.computeEndpoint.replace(/\/+$/, '') : null,
    computeApiVersion: merged.computeApiVersion,
    source,
  };

  const authType = merged.authType?.toLowerCase() ?? null;
  const hasAppCredential = Boolean(merged.applicationCredentialId || merged.applicationCredentialName || merged.applicationCredentialSecret);
  const method =
    authType === null
      ? hasAppCredential
        ? 'application_credential'
        : 'password'
      : PASSWORD_TYPES.includes(authType)
        ? 'password'
        : APP_CREDENTIAL_TYPES.includes(authType)
          ? 'application_credential'
          : null;
  if (method === null) {
    throw new ConfigError('OS_AUTH_TYPE', `'${merged.authType}' is not supported (use password or v3applicationcredential)`);
  }

  const user = (why: string, required: boolean): UserRef | null => {
    if (!merged.userId && !merged.username) {
      if (!required) return null;
      throw missing('OS_USERNAME or OS_USER_ID', 'username', why);
    }
    if (!merged.userId && !merged.userDomainName && !merged.userDomainId) {
      throw missing('OS_USER_DOMAIN_NAME or OS_USER_DOMAIN_ID', 'user_domain_name', 'with OS_USERNAME (Keystone names users within a domain)');
    }
    return {
      id: merged.userId,
      name: merged.userId ? null : merged.username,
      domainId: merged.userDomainId,
      domainName: merged.userDomainId ? null : merged.userDomainName,
    };
  };

  if (method === 'application_credential') {
    if (!merged.applicationCredentialSecret) {
      throw missing('OS_APPLICATION_CREDENTIAL_SECRET', 'application_credential_secret', 'for application-credential auth');
    }
    if (!merged.applicationCredentialId && !merged.applicationCredentialName) {
      throw missing('OS_APPLICATION_CREDENTIAL_ID or OS_APPLICATION_CREDENTIAL_NAME', 'application_credential_id', 'for application-credential auth');
    }
    return {
      ...common,
      method,
      applicationCredentialId: merged.applicationCredentialId,
      applicationCredentialName: merged.applicationCredentialId ? null : merged.applicationCredentialName,
      secret: merged.applicationCredentialSecret,
      user: merged.applicationCredentialId ? null : user('with OS_APPLICATION_CREDENTIAL_NAME (a credential name is unique per user only)', true),
    };
  }

  if (!merged.password) throw missing('OS_PASSWORD', 'password', 'for password auth');
  const passwordUser = user('for password auth', true) as UserRef;
  if (!merged.projectId && !merged.projectName) {
    throw missing('OS_PROJECT_NAME or OS_PROJECT_ID', 'project_name', 'for password auth (Nova needs a project-scoped token)');
  }
  // like keystoneauth: a project named without a domain lives in the user's domain
  const projectDomainId = merged.projectDomainId ?? (merged.projectDomainName ? null : merged.userDomainId);
  const projectDomainName = merged.projectDomainId ? null : (merged.projectDomainName ?? (projectDomainId ? null : merged.userDomainName));
  if (!merged.projectId && !projectDomainId && !projectDomainName) {
    throw missing('OS_PROJECT_DOMAIN_NAME or OS_PROJECT_DOMAIN_ID', 'project_domain_name', 'with OS_PROJECT_NAME (Keystone names projects within a domain)');
  }
  return {
    ...common,
    method,
    user: passwordUser,
    password: merged.password,
    project: merged.projectId
      ? { id: merged.projectId, name: null, domainId: null, domainName: null }
      : { id: null, name: merged.projectName, domainId: projectDomainId, domainName: projectDomainName },
  };
}

/** The Keystone v3 `auth` body for these credentials. */
export function authRequestBody(credentials: Credentials): Record<string, unknown> {
  const userRef = (u: UserRef) =>
    u.id ? { id: u.id } : { name: u.name, domain: u.domainId ? { id: u.domainId } : { name: u.domainName } };
  if (credentials.method === 'application_credential') {
    const appCred: Record<string, unknown> = credentials.applicationCredentialId
      ? { id: credentials.applicationCredentialId, secret: credentials.secret }
      : { name: credentials.applicationCredentialName, secret: credentials.secret, user: userRef(credentials.user as UserRef) };
    return { auth: { identity: { methods: ['application_credential'], application_credential: appCred } } };
  }
  const p = credentials.project;
  const scope = credentials.trustId
    ? { 'OS-TRUST:trust': { id: credentials.trustId } }
    : { project: p.id ? { id: p.id } : { name: p.name, domain: p.domainId ? { id: p.domainId } : { name: p.domainName } } };
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { ...userRef(credentials.user), password: credentials.password } } },
      scope,
    },
  };
}

/** Who is authenticating, for error messages (never the secret). */
export function describeCredentials(credentials: Credentials): string {
  if (credentials.method === 'application_credential') {
    return `application credential '${credentials.applicationCredentialId ?? credentials.applicationCredentialName}'`;
  }
  const u = credentials.user;
  if (credentials.trustId) return `user '${u.id ?? u.name}' (trust '${credentials.trustId}')`;
  const project = credentials.project.id ?? credentials.project.name;
  return `user '${u.id ?? u.name}' (project '${project}')`;
}
