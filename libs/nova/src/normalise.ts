import type { AvailabilityZone, Hypervisor, Server, ServerGroup, ServerGroupPolicy } from './nova.port';

/**
 * Nova's response bodies turned into the port's types. Each function checks the fields Trellis
 * relies on and throws ShapeError naming the first one that is missing or of the wrong type.
 */

export class ShapeError extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'ShapeError';
  }
}

export const SERVER_GROUP_POLICIES: readonly ServerGroupPolicy[] = ['affinity', 'anti-affinity', 'soft-affinity', 'soft-anti-affinity'];

type Json = Record<string, unknown>;

export function object(value: unknown, where: string): Json {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError(`${where} is not an object`);
  return value as Json;
}

export function array(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new ShapeError(`${where} is not a list`);
  return value;
}

function string(obj: Json, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new ShapeError(`${where}.${key} is ${value === undefined ? 'missing' : 'not a string'}`);
  return value;
}

/** a string field that may be absent or null; "" (Nova's "none yet") becomes null too */
function optionalString(obj: Json, key: string): string | null {
  const value = obj[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

function idOf(obj: Json, key: string, where: string): string {
  const value = obj[key];
  if (typeof value === 'string' && value !== '') return value;
  // hypervisor and service ids are integers before microversion 2.53
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new ShapeError(`${where}.${key} is ${value === undefined ? 'missing' : 'not an id'}`);
}

export function serverGroup(raw: unknown, where = 'server_group'): ServerGroup {
  const g = object(raw, where);
  const policies = g.policies;
  const policy = typeof g.policy === 'string' ? g.policy : Array.isArray(policies) && typeof policies[0] === 'string' ? policies[0] : undefined;
  if (policy === undefined) throw new ShapeError(`${where} has neither policy nor policies[0]`);
  if (!(SERVER_GROUP_POLICIES as readonly string[]).includes(policy)) {
    throw new ShapeError(`${where}.policy '${policy}' is not one of ${SERVER_GROUP_POLICIES.join(', ')}`);
  }
  const rules = g.rules === undefined || g.rules === null ? {} : object(g.rules, `${where}.rules`);
  const members = g.members === undefined || g.members === null ? [] : array(g.members, `${where}.members`);
  return {
    id: idOf(g, 'id', where),
    name: typeof g.name === 'string' ? g.name : '',
    policy: policy as ServerGroupPolicy,
    rules: { ...rules },
    members: members.map((m, i) => {
      if (typeof m !== 'string') throw new ShapeError(`${where}.members[${i}] is not a string`);
      return m;
    }),
  };
}

export function server(raw: unknown, where = 'server'): Server {
  const s = object(raw, where);
  const metadata: Record<string, string> = {};
  if (s.metadata !== undefined && s.metadata !== null) {
    for (const [k, v] of Object.entries(object(s.metadata, `${where}.metadata`))) {
      if (typeof v !== 'string') throw new ShapeError(`${where}.metadata.${k} is not a string`);
      metadata[k] = v;
    }
  }
  let fault: Server['fault'] = null;
  if (s.fault !== undefined && s.fault !== null) {
    const f = object(s.fault, `${where}.fault`);
    fault = { code: typeof f.code === 'number' ? f.code : 0, message: typeof f.message === 'string' ? f.message : '' };
  }
  return {
    id: idOf(s, 'id', where),
    name: typeof s.name === 'string' ? s.name : '',
    status: string(s, 'status', where),
    availabilityZone: optionalString(s, 'OS-EXT-AZ:availability_zone'),
    host: optionalString(s, 'OS-EXT-SRV-ATTR:host'),
    hypervisorHostname: optionalString(s, 'OS-EXT-SRV-ATTR:hypervisor_hostname'),
    hostId: optionalString(s, 'hostId'),
    metadata,
    fault,
    imageId: s.image !== null && typeof s.image === 'object' && typeof (s.image as Record<string, unknown>).id === 'string' ? String((s.image as Record<string, unknown>).id) : null,
    flavor: flavorOf(s.flavor),
    updated: optionalString(s, 'updated'),
  };
}

/** `{id, links}` before compute 2.47, `{original_name, vcpus, ...}` from 2.47 on */
function flavorOf(raw: unknown): Server['flavor'] {
  if (raw === null || typeof raw !== 'object') return null;
  const f = raw as Record<string, unknown>;
  return { id: typeof f.id === 'string' ? f.id : null, name: typeof f.original_name === 'string' ? f.original_name : null };
}

/**
 * Both views list the same zones: the admin /detail view also lists `internal` (the controller's
 * services), which the plain view leaves out and no server can be booted into; `hosts` keeps only
 * hosts running nova-compute.
 */
export function availabilityZones(body: unknown, where = 'body'): AvailabilityZone[] {
  const list = array(object(body, where).availabilityZoneInfo, `${where}.availabilityZoneInfo`);
  const zones: AvailabilityZone[] = [];
  list.forEach((raw, i) => {
    const at = `availabilityZoneInfo[${i}]`;
    const z = object(raw, at);
    const name = string(z, 'zoneName', at);
    const state = z.zoneState && typeof z.zoneState === 'object' ? (z.zoneState as Json) : {};
    let hosts: string[] | null = null;
    if (z.hosts !== undefined && z.hosts !== null) {
      const byHost = object(z.hosts, `${at}.hosts`);
      hosts = Object.keys(byHost).filter((h) => {
        const services = byHost[h];
        return !!services && typeof services === 'object' && 'nova-compute' in services;
      });
      if (hosts.length === 0 && Object.keys(byHost).length > 0) return;
    }
    zones.push({ name, available: state.available === true, hosts });
  });
  return zones;
}

export function hypervisor(raw: unknown, where = 'hypervisor'): Hypervisor {
  const h = object(raw, where);
  const service = h.service === undefined || h.service === null ? null : object(h.service, `${where}.service`);
  const hostname = string(h, 'hypervisor_hostname', where);
  return {
    id: idOf(h, 'id', where),
    hypervisorHostname: hostname,
    // service.host is what ZONE:HOST needs; it differs from hypervisor_hostname for vSphere clusters
    serviceHost: service && typeof service.host === 'string' ? service.host : hostname,
    state: optionalString(h, 'state'),
    status: optionalString(h, 'status'),
  };
}
