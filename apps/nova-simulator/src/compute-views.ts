import { createHash } from 'node:crypto';
import { novaMicroTime, novaTime } from './http-kit';
import type { Caller } from './identity';
import type { Microversion } from './microversion';
import type { HostLoad } from './scheduler';
import { stableUuid, type FlavorRecord, type SimServer, type SimServerGroup, type SimulatorState } from './simulator-state';

/** JSON views of compute resources, per microversion and caller, as in nova-samples/. */

export interface ComputeUrls {
  /** `<url>/compute/v2.1` */
  computeUrl: string;
  /** `<url>/compute` (Nova's bookmark links drop the version) */
  bookmarkBase: string;
}

/** Nova's hostId: sha224 of project id + host, so it differs per project for the same host. */
export const hostId = (projectId: string, host: string): string =>
  createHash('sha224').update(projectId + host).digest('hex');

const links = (urls: ComputeUrls, kind: string, id: string) => [
  { rel: 'self', href: `${urls.computeUrl}/${kind}/${id}` },
  { rel: 'bookmark', href: `${urls.bookmarkBase}/${kind}/${id}` },
];

export function serverLinks(urls: ComputeUrls, id: string) {
  return links(urls, 'servers', id);
}

/** Nova's hostname sanitising of a display name. */
const hostname = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 63) || 'server';

function flavorView(f: FlavorRecord, v: Microversion, urls: ComputeUrls): Record<string, unknown> {
  if (!v.atLeast('2.47')) return { id: f.id, links: [{ rel: 'bookmark', href: `${urls.bookmarkBase}/flavors/${f.id}` }] };
  return { vcpus: f.vcpus, ram: f.ram, disk: f.disk, ephemeral: 0, swap: 0, original_name: f.name, extra_specs: {} };
}

export function serverView(
  state: SimulatorState,
  s: SimServer,
  caller: Caller,
  v: Microversion,
  urls: ComputeUrls,
): Record<string, unknown> {
  const { status, taskState, host } = state.phase(s);
  const vmState =
    status === 'BUILD' ? 'building' : status === 'ERROR' ? 'error' : status === 'DELETED' ? 'deleted' : (s.vmState ?? 'active');
  const now = state.now();
  const launched = s.outcome === 'ACTIVE' && s.readyAt <= now && status !== 'BUILD';
  const updated = state.changedAt(s);
  const view: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status,
    tenant_id: s.projectId,
    user_id: s.userId,
    metadata: { ...s.metadata },
    hostId: host ? hostId(s.projectId, host.name) : '',
    image: { id: s.imageRef, links: [{ rel: 'bookmark', href: `${urls.bookmarkBase}/images/${s.imageRef}` }] },
    flavor: flavorView(s.flavor, v, urls),
    created: novaTime(s.createdAt),
    updated: novaTime(updated),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: serverLinks(urls, s.id),
    'OS-DCF:diskConfig': 'MANUAL',
  };
  if (status === 'ACTIVE' || status === 'BUILD') view.progress = 0;
  if (status === 'ERROR' && s.fault) {
    const fault: Record<string, unknown> = { code: s.fault.code, created: novaTime(s.fault.created), message: s.fault.message };
    // The traceback is for admins only, as with Nova's default policy.
    if (caller.isAdmin) fault.details = s.fault.details;
    view.fault = fault;
  }
  Object.assign(view, {
    'OS-EXT-AZ:availability_zone': s.zone ?? '',
    config_drive: '',
    key_name: s.keyName,
    'OS-SRV-USG:launched_at': launched ? novaMicroTime(s.readyAt) : null,
    'OS-SRV-USG:terminated_at': status === 'DELETED' ? novaMicroTime(s.destroyedAt!) : null,
  });
  if (caller.isAdmin) {
    view['OS-EXT-SRV-ATTR:host'] = host?.name ?? null;
    view['OS-EXT-SRV-ATTR:instance_name'] = `instance-${s.instanceNumber.toString(16).padStart(8, '0')}`;
    view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = host?.hypervisorHostname ?? null;
    if (v.atLeast('2.3')) {
      Object.assign(view, {
        'OS-EXT-SRV-ATTR:reservation_id': s.reservationId,
        'OS-EXT-SRV-ATTR:launch_index': 0,
        'OS-EXT-SRV-ATTR:hostname': hostname(s.name),
        'OS-EXT-SRV-ATTR:kernel_id': '',
        'OS-EXT-SRV-ATTR:ramdisk_id': '',
        'OS-EXT-SRV-ATTR:root_device_name': status === 'ACTIVE' ? '/dev/sda' : null,
        'OS-EXT-SRV-ATTR:user_data': s.userData,
      });
    }
  } else if (v.atLeast('2.90')) {
    view['OS-EXT-SRV-ATTR:hostname'] = hostname(s.name);
  }
  Object.assign(view, {
    'OS-EXT-STS:task_state': taskState,
    'OS-EXT-STS:vm_state': vmState,
    'OS-EXT-STS:power_state': ['ACTIVE', 'REBUILD', 'PASSWORD', 'RESCUE', 'VERIFY_RESIZE'].includes(status) ? 1 : status === 'PAUSED' ? 3 : status === 'SUSPENDED' ? 7 : 0,
    'os-extended-volumes:volumes_attached': [],
  });
  if (v.atLeast('2.16') && caller.isAdmin) view.host_status = host && status !== 'DELETED' ? 'UP' : '';
  if (v.atLeast('2.9')) view.locked = !!s.locked;
  if (v.atLeast('2.73')) view.locked_reason = null;
  if (v.atLeast('2.19')) view.description = s.description;
  if (v.atLeast('2.26')) view.tags = [...s.tags];
  if (v.atLeast('2.63')) view.trusted_image_certificates = null;
  // A deleted group's former members show none.
  if (v.atLeast('2.71')) view.server_groups = s.groupId !== null && state.group(s.groupId) ? [s.groupId] : [];
  return view;
}

export function serverGroupView(state: SimulatorState, g: SimServerGroup, v: Microversion): Record<string, unknown> {
  const view: Record<string, unknown> = { id: g.id, name: g.name };
  if (v.atLeast('2.64')) {
    view.policy = g.policy;
    view.rules = { ...g.rules };
  } else {
    view.policies = [g.policy];
    view.metadata = {};
  }
  view.members = state.groupMembers(g);
  if (v.atLeast('2.13')) {
    view.project_id = g.projectId;
    view.user_id = g.userId;
  }
  return view;
}

const CPU_INFO = {
  arch: 'x86_64',
  model: 'Nehalem',
  vendor: 'Intel',
  features: ['pge', 'clflush'],
  topology: { cores: 1, threads: 1, sockets: 4 },
};

/** Hypervisor ids: integers below 2.53, UUIDs from 2.53 (and the same for the compute service). */
export function hypervisorId(state: SimulatorState, hostName: string, v: Microversion): number | string {
  return v.atLeast('2.53') ? stableUuid('compute-node', hostName) : state.hostIndex(hostName) + 1;
}

function serviceId(state: SimulatorState, hostName: string, v: Microversion): number | string {
  // The controller's conductor and scheduler services come first, as on the reference cloud.
  return v.atLeast('2.53') ? stableUuid('compute-service', hostName) : state.hostIndex(hostName) + 3;
}

export function hypervisorView(state: SimulatorState, load: HostLoad, v: Microversion, detail: boolean): Record<string, unknown> {
  const h = load.host;
  const view: Record<string, unknown> = {
    id: hypervisorId(state, h.name, v),
    hypervisor_hostname: h.hypervisorHostname,
    state: 'up',
    status: 'enabled',
  };
  if (!detail) return view;
  Object.assign(view, {
    hypervisor_type: 'fake',
    hypervisor_version: 1000,
    host_ip: '127.0.0.1',
    service: { id: serviceId(state, h.name, v), host: h.name, disabled_reason: null },
  });
  if (v.atLeast('2.88')) {
    view.uptime = null;
    return view;
  }
  Object.assign(view, {
    vcpus: h.capacity.vcpus,
    memory_mb: h.capacity.ram_mb,
    local_gb: h.capacity.disk_gb,
    vcpus_used: load.used.vcpus,
    memory_mb_used: load.used.ram_mb,
    local_gb_used: load.used.disk_gb,
    free_ram_mb: h.capacity.ram_mb - load.used.ram_mb,
    free_disk_gb: h.capacity.disk_gb - load.used.disk_gb,
    current_workload: 0,
    running_vms: load.used.instances,
    disk_available_least: 0,
    // A JSON string before 2.28, an object from 2.28.
    cpu_info: v.atLeast('2.28') ? CPU_INFO : JSON.stringify(CPU_INFO),
  });
  return view;
}

export function flavorResourceView(f: FlavorRecord, urls: ComputeUrls, detail: boolean, v: Microversion): Record<string, unknown> {
  const view: Record<string, unknown> = { id: f.id, name: f.name };
  if (detail) {
    Object.assign(view, {
      ram: f.ram,
      disk: f.disk,
      swap: '',
      'OS-FLV-EXT-DATA:ephemeral': 0,
      'OS-FLV-DISABLED:disabled': false,
      vcpus: f.vcpus,
      'os-flavor-access:is_public': true,
      rxtx_factor: 1.0,
    });
  }
  view.links = links(urls, 'flavors', f.id);
  if (detail && v.atLeast('2.55')) view.description = null;
  if (detail && v.atLeast('2.61')) view.extra_specs = {};
  return view;
}
