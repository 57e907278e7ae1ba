import { loadConfig, type OpenStackSettings } from '@trellis/common';
import { createNovaClient, type NovaPort, type Server, type ServerGroup } from '@trellis/nova';
import type { ScenarioCloud } from '../../support/real-cloud-scenarios';

/**
 * The real Keystone + Nova of ../shared/openstack (started by scripts/openstack/ensure-cloud.sh),
 * for the suites in test/openstack. What the harness creates is fixed: two zones of two fake
 * hosts each, one of them reporting a DRS-like node name.
 */
export const REAL_CLOUD = {
  authUrl: 'http://127.0.0.1:5000/v3',
  image: 'cirros-fake',
  flavor: 'm1.tiny',
  zones: ['az1', 'az2'] as [string, string],
  hostsByZone: { az1: ['fake-host-1', 'fake-host-2'], az2: ['fake-host-3', 'fake-host-4'] } as Record<string, string[]>,
  /** fake-host-4's hypervisor_hostname: the node name differs from the service host, as with vSphere DRS */
  drsHypervisor: 'fake-drs-cluster-4',
  noValidHost: 'No valid host was found. There are not enough hosts available.',
} as const;

export type RealCloudUser = 'admin' | 'demo' | 'alt' | 'viewer' | 'trellis';

/** The harness's users other than admin (README of ../shared/openstack): name, password, project. */
const HARNESS_USERS: Record<Exclude<RealCloudUser, 'admin'>, { username: string; password: () => string; project: string }> = {
  demo: { username: 'demo', password: () => process.env.DEMO_PASS || 'demo', project: 'demo' },
  alt: { username: 'alt_demo', password: () => process.env.DEMO_PASS || 'demo', project: 'alt' },
  viewer: { username: 'viewer', password: () => process.env.DEMO_PASS || 'demo', project: 'demo' },
  trellis: { username: 'trellis', password: () => process.env.SERVICE_PASS || 'service-secret', project: 'service' },
};

const HARNESS_DEFAULTS: OpenStackSettings = {
  cloud: null,
  cloudsFile: null,
  authUrl: REAL_CLOUD.authUrl,
  authType: null,
  username: 'admin',
  userId: null,
  password: 'admin',
  userDomainName: 'Default',
  userDomainId: null,
  projectName: 'admin',
  projectId: null,
  projectDomainName: 'Default',
  projectDomainId: null,
  regionName: 'RegionOne',
  interface: 'public',
  applicationCredentialId: null,
  applicationCredentialName: null,
  applicationCredentialSecret: null,
  computeEndpoint: null,
  computeApiVersion: null,
};

/**
 * Settings for the harness's users: admin (role admin in project admin), demo (member of demo),
 * alt (alt_demo, member of alt), viewer (reader of demo) and trellis (Trellis's service user, the
 * trustee). An OS_AUTH_URL or OS_CLOUD in the environment points the admin at another cloud of the
 * same shape; the other users then keep that cloud's URL, region and domains. The passwords follow
 * the harness's own overrides, ADMIN_PASS, DEMO_PASS and SERVICE_PASS.
 */
export function realCloudSettings(user: RealCloudUser): OpenStackSettings {
  const fromEnv = loadConfig(process.env).openstack;
  const configured = fromEnv.authUrl !== null || fromEnv.cloud !== null;
  const admin: OpenStackSettings = configured
    ? fromEnv
    : { ...HARNESS_DEFAULTS, password: process.env.ADMIN_PASS || HARNESS_DEFAULTS.password };
  if (user === 'admin') return admin;
  return {
    ...HARNESS_DEFAULTS,
    authUrl: admin.authUrl ?? REAL_CLOUD.authUrl,
    regionName: admin.regionName,
    interface: admin.interface,
    userDomainName: admin.userDomainName ?? 'Default',
    userDomainId: admin.userDomainId,
    projectDomainName: admin.projectDomainName ?? 'Default',
    projectDomainId: admin.projectDomainId,
    computeApiVersion: admin.computeApiVersion,
    username: HARNESS_USERS[user].username,
    password: HARNESS_USERS[user].password(),
    projectName: HARNESS_USERS[user].project,
  };
}

const clients = new Map<RealCloudUser, NovaPort>();

/** One client per user for the whole test file (one Keystone token each). */
export function realCloudClient(user: RealCloudUser = 'admin'): NovaPort {
  let client = clients.get(user);
  if (!client) {
    client = createNovaClient(realCloudSettings(user));
    clients.set(user, client);
  }
  return client;
}

/**
 * Fails with the way out when the cloud is not there: these suites test the real services and
 * must not pass, or be skipped, without them.
 */
export async function assertRealCloudAnswers(): Promise<void> {
  const url = realCloudSettings('admin').authUrl ?? REAL_CLOUD.authUrl;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (res.status >= 400) throw new Error(`answered ${res.status}`);
  } catch (e) {
    throw new Error(
      `the real OpenStack cloud does not answer at ${url} (${(e as Error).message}); ` +
        'bring it up with scripts/openstack/ensure-cloud.sh (as root) and run npm run test:openstack again',
    );
  }
}

const POLL_MS = 250;
const GONE_TIMEOUT_MS = 60_000;

const startsWith = (prefix: string) => (x: { name: string }) => x.name.startsWith(prefix);
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Polls until every id is gone (getServer answers null); throws naming the ones that stay. */
export async function waitUntilServersGone(ids: string[], user: RealCloudUser = 'admin', timeoutMs = GONE_TIMEOUT_MS): Promise<void> {
  const nova = realCloudClient(user);
  const deadline = Date.now() + timeoutMs;
  let left = [...ids];
  while (left.length > 0) {
    const still = await Promise.all(left.map(async (id) => ((await nova.getServer(id)) === null ? null : id)));
    left = still.filter((id): id is string => id !== null);
    if (left.length === 0) return;
    if (Date.now() > deadline) throw new Error(`servers still present ${timeoutMs / 1000} s after their delete: ${left.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Deletes every server whose name starts with prefix, in the projects of the given users (admin
 * lists only its own project), and waits until they are gone. Returns the deleted servers.
 */
export async function cleanupServers(prefix: string, users: RealCloudUser[] = ['admin', 'demo']): Promise<Server[]> {
  if (!prefix) throw new Error('cleanupServers needs a non-empty name prefix, so that it never deletes every server');
  const deleted: Server[] = [];
  for (const user of users) {
    const nova = realCloudClient(user);
    // Nova's name filter is a regular expression in the database's dialect: check the prefix here too
    const servers = (await nova.listServers({ name: `^${escapeRegex(prefix)}` })).filter(startsWith(prefix));
    for (const s of servers) await nova.deleteServer(s.id);
    await waitUntilServersGone(servers.map((s) => s.id), user);
    deleted.push(...servers);
  }
  return deleted;
}

/** Deletes every server group whose name starts with prefix, in the projects of the given users. */
export async function cleanupServerGroups(prefix: string, users: RealCloudUser[] = ['admin', 'demo']): Promise<ServerGroup[]> {
  if (!prefix) throw new Error('cleanupServerGroups needs a non-empty name prefix, so that it never deletes every group');
  const deleted: ServerGroup[] = [];
  for (const user of users) {
    const nova = realCloudClient(user);
    const groups = (await nova.listServerGroups()).filter(startsWith(prefix));
    for (const g of groups) await nova.deleteServerGroup(g.id);
    deleted.push(...groups);
  }
  return deleted;
}

/** Servers first, so that no server outlives the group it was scheduled by. */
export async function cleanupCloud(
  prefix: string,
  users: RealCloudUser[] = ['admin', 'demo'],
): Promise<{ servers: Server[]; groups: ServerGroup[] }> {
  const servers = await cleanupServers(prefix, users);
  const groups = await cleanupServerGroups(prefix, users);
  return { servers, groups };
}

/** The servers of the user's project whose metadata has key = value (e.g. trellis_cluster = <id>). */
export async function serversByMetadata(key: string, value: string, user: RealCloudUser = 'admin'): Promise<Server[]> {
  return realCloudClient(user).listServers({ metadata: { [key]: value } });
}

/**
 * The real cloud as the REST scenarios (test/support/real-cloud-scenarios.ts) drive it: Trellis's
 * service users' settings, the harness's image, flavor, hosts by zone and DRS node, and a clean-up
 * of every object named with the test's prefix in the admin's, demo's and trellis's projects.
 */
export const REAL_SCENARIO_CLOUD: ScenarioCloud = {
  label: 'real cloud',
  settings: realCloudSettings,
  image: REAL_CLOUD.image,
  flavor: REAL_CLOUD.flavor,
  hostsByZone: { az1: ['fake-host-1', 'fake-host-2'], az2: ['fake-host-3', 'fake-host-4'] },
  drs: { zone: 'az2', host: 'fake-host-4', hypervisor: REAL_CLOUD.drsHypervisor },
  cleanup: (prefix) => cleanupCloud(prefix, ['admin', 'demo', 'trellis']),
  pollIntervalMs: 250,
  actionTimeoutMs: 180_000,
};
