import { randomUUID } from 'node:crypto';
import {
  flavorResourceView,
  hypervisorId,
  hypervisorView,
  serverGroupView,
  serverLinks,
  serverView,
  type ComputeUrls,
} from './compute-views';
import { ApiError, isRecord, isUuid, jsonBody, novaMicroTime, pyRepr, queryFlag, schemaError, type SimRequest, type SimResponse } from './http-kit';
import type { Caller } from './identity';
import { Microversion, negotiateMicroversion, versionHeaders } from './microversion';
import type { GroupPolicy } from './scheduler';
import { FLAVORS, stableUuid, type CreateServerInput, type SimServer, type SimServerGroup, type SimulatorState, type VmState } from './simulator-state';

/** The compute API under `/compute`: version documents, then `/v2.1/...` with token and microversion. */

export interface ComputeContext {
  state: SimulatorState;
  urls: ComputeUrls;
  maxVersion: Microversion;
}

interface Call {
  req: SimRequest;
  ctx: ComputeContext;
  caller: Caller;
  v: Microversion;
}

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** Nova's error body: `{"itemNotFound": {"code": 404, "message": "..."}}`. */
export function novaFault(status: number, message: string, headers: Record<string, string> = {}): SimResponse {
  return { status, headers, body: { [FAULT_NAMES[status] ?? 'computeFault']: { code: status, message } } };
}

/** keystonemiddleware's answer in front of Nova to a missing, unknown or expired token. */
export function tokenRejected(identityUrl: string): SimResponse {
  return {
    status: 401,
    headers: { 'WWW-Authenticate': `Keystone uri="${identityUrl}"` },
    body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } },
  };
}

const policyDenied = (rule: string) => new ApiError(403, `Policy doesn't allow ${rule} to be performed.`);
const notFound = (message: string) => new ApiError(404, message);

function versionEntry(ctx: ComputeContext) {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: ctx.maxVersion.toString(),
    min_version: '2.1',
    updated: '2013-07-23T11:33:21Z',
    links: [{ rel: 'self', href: `${ctx.urls.computeUrl}/` }],
  };
}

export function handleCompute(req: SimRequest, sub: string, ctx: ComputeContext, identityUrl: string): SimResponse {
  if (sub === '' || sub === '/') {
    if (req.method !== 'GET') return novaFault(405, 'The method is not allowed for the requested URL.');
    return {
      status: 200,
      body: {
        versions: [
          {
            id: 'v2.0',
            status: 'SUPPORTED',
            version: '',
            min_version: '',
            updated: '2011-01-21T11:33:21Z',
            links: [{ rel: 'self', href: `${ctx.urls.bookmarkBase}/v2/` }],
          },
          versionEntry(ctx),
        ],
      },
    };
  }
  if (sub === '/v2.1' || sub === '/v2.1/') {
    return {
      status: 200,
      body: {
        version: {
          ...versionEntry(ctx),
          'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
        },
      },
    };
  }
  if (!sub.startsWith('/v2.1/')) return novaFault(404, 'The resource could not be found.');

  const negotiated = negotiateMicroversion(req.headers, ctx.maxVersion);
  if (!negotiated.ok) return novaFault(negotiated.status, negotiated.message);
  const v = negotiated.version;
  const headers = versionHeaders(v);

  const tokenHeader = req.headers['x-auth-token'];
  const caller = ctx.state.identity.resolve(Array.isArray(tokenHeader) ? tokenHeader[0] : tokenHeader);
  if (!caller) {
    const r = tokenRejected(identityUrl);
    return { ...r, headers: { ...r.headers, ...headers } };
  }
  try {
    const res = route({ req, ctx, caller, v }, sub.slice('/v2.1'.length).replace(/\/+$/, ''));
    return { ...res, headers: { ...headers, ...res.headers } };
  } catch (e) {
    if (e instanceof ApiError) return novaFault(e.status, e.message, { ...headers, ...e.headers });
    throw e;
  }
}

type Handler = (call: Call, ...params: string[]) => SimResponse;

const ROUTES: Array<[string, RegExp, Handler]> = [
  ['GET', /^\/servers$/, (c) => listServers(c, false)],
  ['GET', /^\/servers\/detail$/, (c) => listServers(c, true)],
  ['POST', /^\/servers$/, (c) => createServerRecorded(c)],
  ['GET', /^\/servers\/([^/]+)$/, (c, id) => showServer(c, id)],
  ['DELETE', /^\/servers\/([^/]+)$/, (c, id) => recorded(c, id, 'delete', deleteServer(c, id))],
  ['PUT', /^\/servers\/([^/]+)$/, (c, id) => updateServer(c, id)],
  ['PUT', /^\/servers\/([^/]+)\/metadata$/, (c, id) => replaceMetadata(c, id)],
  ['POST', /^\/servers\/([^/]+)\/action$/, (c, id) => recorded(c, id, actionName(c), serverAction(c, id))],
  ['GET', /^\/servers\/([^/]+)\/os-instance-actions$/, (c, id) => listInstanceActions(c, id)],
  ['GET', /^\/os-server-groups$/, (c) => listGroups(c)],
  ['POST', /^\/os-server-groups$/, (c) => createGroup(c)],
  ['GET', /^\/os-server-groups\/([^/]+)$/, (c, id) => showGroup(c, id)],
  ['DELETE', /^\/os-server-groups\/([^/]+)$/, (c, id) => deleteGroup(c, id)],
  ['GET', /^\/os-availability-zone$/, (c) => availabilityZones(c, false)],
  ['GET', /^\/os-availability-zone\/detail$/, (c) => availabilityZones(c, true)],
  ['GET', /^\/os-hypervisors$/, (c) => listHypervisors(c, false)],
  ['GET', /^\/os-hypervisors\/detail$/, (c) => listHypervisors(c, true)],
  ['GET', /^\/os-hypervisors\/([^/]+)$/, (c, id) => showHypervisor(c, id)],
  ['GET', /^\/os-aggregates$/, (c) => listAggregates(c)],
  ['GET', /^\/flavors$/, (c) => listFlavors(c, false)],
  ['GET', /^\/flavors\/detail$/, (c) => listFlavors(c, true)],
  ['GET', /^\/flavors\/([^/]+)$/, (c, id) => showFlavor(c, id)],
];

function route(call: Call, path: string): SimResponse {
  let pathMatched = false;
  for (const [method, pattern, handler] of ROUTES) {
    const m = pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (method === call.req.method || (method === 'GET' && call.req.method === 'HEAD')) {
      return handler(call, ...m.slice(1).map(decodeURIComponent));
    }
  }
  if (pathMatched) throw new ApiError(405, 'The method is not allowed for the requested URL.');
  throw notFound('The resource could not be found.');
}

// ---------- servers ----------

const VISIBLE_STATUSES = [
  'ACTIVE', 'BUILD', 'REBUILD', 'SHUTOFF', 'STOPPED', 'PAUSED', 'SUSPENDED', 'RESCUE', 'RESIZE', 'VERIFY_RESIZE',
  'MIGRATING', 'REBOOT', 'HARD_REBOOT', 'PASSWORD', 'ERROR', 'DELETED', 'SOFT_DELETED', 'SHELVED', 'SHELVED_OFFLOADED',
  'UNKNOWN',
];

function visibleServer(call: Call, id: string): SimServer {
  const s = call.ctx.state.server(id);
  // Nova scopes the lookup to the caller's project unless the caller is admin.
  if (!s || (s.projectId !== call.caller.project.id && !call.caller.isAdmin)) throw notFound(`Instance ${id} could not be found.`);
  return s;
}

function parseLimit(query: URLSearchParams, name = 'limit'): number | null {
  const raw = query.get(name);
  if (raw === null) return null;
  if (!/^[0-9]+$/.test(raw)) {
    throw new ApiError(400, `Invalid input for query parameters ${name}. Value: ${raw}. '${raw}' does not match '^[0-9]*$'`);
  }
  return Math.min(Number(raw), 1000);
}

function listServers(call: Call, detail: boolean): SimResponse {
  const { req, ctx, caller, v } = call;
  const q = req.query;
  const state = ctx.state;
  const allTenants = queryFlag(q, 'all_tenants', 'all_projects');
  if (allTenants && !caller.isAdmin) {
    throw policyDenied(`os_compute_api:servers:${detail ? 'detail' : 'index'}:get_all_tenants`);
  }
  // a list by changes-since shows the deleted servers Nova still has rows of
  let servers = q.has('changes-since') ? [...state.servers(), ...state.goneServers()] : state.servers();
  if (!allTenants) servers = servers.filter((s) => s.projectId === caller.project.id);
  if (caller.isAdmin) {
    const project = q.get('project_id') ?? q.get('tenant_id');
    if (project !== null && allTenants) servers = servers.filter((s) => s.projectId === project);
    const host = q.get('host');
    if (host !== null) servers = servers.filter((s) => state.phase(s).host?.name === host);
    const node = q.get('node');
    if (node !== null) servers = servers.filter((s) => state.phase(s).host?.hypervisorHostname === node);
  }
  const zone = q.get('availability_zone');
  if (zone !== null) servers = servers.filter((s) => s.zone === zone);

  // changes-since: servers changed at or after that time, deleted ones included (Nova then does not
  // leave out the deleted)
  const changesSince = q.get('changes-since');
  let since: number | null = null;
  if (changesSince !== null) {
    since = Date.parse(changesSince);
    if (!Number.isFinite(since)) {
      throw new ApiError(400, `Invalid input for query parameters changes-since. Value: ${changesSince}. '${changesSince}' is not a 'date-time'`);
    }
    servers = servers.filter((s) => state.changedAt(s) >= since!);
  }

  const statuses = q.getAll('status').map((s) => s.toUpperCase());
  if (statuses.length > 0) {
    if (!statuses.some((s) => VISIBLE_STATUSES.includes(s))) {
      if (v.atLeast('2.38')) throw new ApiError(400, 'Invalid status value');
      return { status: 200, body: { servers: [] } };
    }
    const wanted = new Set(statuses.map((s) => (s === 'STOPPED' ? 'SHUTOFF' : s)));
    servers = servers.filter((s) => wanted.has(state.status(s)));
  } else if (since === null) {
    // A deleted server is listed only when asked for by status or by changes-since, as in Nova.
    servers = servers.filter((s) => state.status(s) !== 'DELETED');
  }

  const name = q.get('name');
  if (name !== null) {
    let re: RegExp;
    try {
      re = new RegExp(name);
    } catch {
      throw new ApiError(400, `Invalid input for query parameters name. Value: ${name}. not a valid regular expression`);
    }
    // Nova's name filter is an unanchored regular expression match (SQL REGEXP).
    servers = servers.filter((s) => re.test(s.name));
  }

  servers = servers.sort((a, b) => b.createdAt - a.createdAt || b.instanceNumber - a.instanceNumber);
  const marker = q.get('marker');
  if (marker !== null) {
    const at = servers.findIndex((s) => s.id === marker);
    if (at < 0) throw new ApiError(400, `marker [${marker}] not found`);
    servers = servers.slice(at + 1);
  }
  const limit = parseLimit(q);
  if (limit !== null) servers = servers.slice(0, limit);

  const items = servers.map((s) =>
    detail ? serverView(state, s, caller, v, ctx.urls) : { id: s.id, name: s.name, links: serverLinks(ctx.urls, s.id) },
  );
  const body: Record<string, unknown> = { servers: items };
  if (limit !== null && servers.length === limit && limit > 0) {
    const next = new URLSearchParams(q);
    next.set('limit', String(limit));
    next.set('marker', servers[servers.length - 1].id);
    body.servers_links = [{ rel: 'next', href: `${ctx.urls.computeUrl}/servers${detail ? '/detail' : ''}?${next}` }];
  }
  return { status: 200, body };
}

function showServer(call: Call, id: string): SimResponse {
  const s = visibleServer(call, id);
  return { status: 200, body: { server: serverView(call.ctx.state, s, call.caller, call.v, call.ctx.urls) } };
}

/** PUT /servers/{id}: Nova renames a server in any state at once and answers with its view. */
function updateServer(call: Call, id: string): SimResponse {
  const body = jsonBody(call.req);
  if (!isRecord(body) || !isRecord(body.server)) throw schemaError('(body)', body ?? null, "'server' is a required property");
  for (const k of Object.keys(body.server)) {
    if (!['name', 'description', 'accessIPv4', 'accessIPv6', 'OS-DCF:diskConfig', 'hostname'].includes(k)) {
      throw schemaError('server', body.server, `Additional properties are not allowed ('${k}' was unexpected)`);
    }
  }
  const s = visibleServer(call, id);
  const name = body.server.name;
  if (name !== undefined) {
    if (typeof name !== 'string' || name.length < 1 || name.length > 255) {
      throw schemaError('name', name, `${pyRepr(name)} is not valid under any of the given schemas`);
    }
    s.name = name;
  }
  if (typeof body.server.description === 'string') s.description = body.server.description;
  s.touchedAt = call.ctx.state.now();
  return { status: 200, body: { server: serverView(call.ctx.state, s, call.caller, call.v, call.ctx.urls) } };
}

/** vm_states in which Nova changes a server's metadata (its check_instance_state on update_all) */
const METADATA_FROM: VmState[] = ['active', 'paused', 'suspended', 'stopped'];

/** PUT /servers/{id}/metadata: the metadata becomes exactly the body's (Nova's update_all). */
function replaceMetadata(call: Call, id: string): SimResponse {
  const body = jsonBody(call.req);
  if (!isRecord(body) || !isRecord(body.metadata)) throw schemaError('(body)', body ?? null, "'metadata' is a required property");
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(body.metadata)) {
    if (typeof v !== 'string') throw schemaError(`metadata/${k}`, v, `${pyRepr(v)} is not of type 'string'`);
    metadata[k] = v;
  }
  const s = visibleServer(call, id);
  const { vmState, busy } = call.ctx.state.vmStateOf(s);
  if (busy !== null) throw new ApiError(409, `Cannot 'update metadata' instance ${id} while it is in task_state ${busy}`);
  if (vmState === null || !METADATA_FROM.includes(vmState)) {
    throw new ApiError(409, `Cannot 'update metadata' instance ${id} while it is in vm_state ${vmState ?? call.ctx.state.status(s).toLowerCase()}`);
  }
  s.metadata = metadata;
  s.touchedAt = call.ctx.state.now();
  return { status: 200, body: { metadata } };
}

function deleteServer(call: Call, id: string): SimResponse {
  const s = visibleServer(call, id);
  // Once its compute host is done with it the instance is deleted: Nova no longer finds it.
  if (call.ctx.state.status(s) === 'DELETED') throw notFound(`Instance ${id} could not be found.`);
  call.ctx.state.deleteServer(s);
  return { status: 204 };
}

const SERVER_KEYS_ALWAYS = [
  'name', 'imageRef', 'flavorRef', 'networks', 'availability_zone', 'metadata', 'key_name', 'user_data',
  'security_groups', 'adminPass', 'accessIPv4', 'accessIPv6', 'config_drive', 'min_count', 'max_count',
  'return_reservation_id', 'block_device_mapping', 'block_device_mapping_v2', 'OS-DCF:diskConfig',
];
const SERVER_KEYS_SINCE: Array<[string, string]> = [
  ['description', '2.19'],
  ['tags', '2.52'],
  ['trusted_image_certificates', '2.63'],
  ['host', '2.74'],
  ['hypervisor_hostname', '2.74'],
  ['hostname', '2.90'],
];

const METADATA_KEY = /^[a-zA-Z0-9-_:. ]{1,255}$/;
const NAME_PATTERN = /^(?!\s)[\s\S]{1,255}(?<!\s)$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function idFromRef(ref: string): string {
  // A ref may be a bare id or a link ending in it.
  return ref.includes('/') ? ref.replace(/\/+$/, '').split('/').pop()! : ref;
}

function parseNetworks(raw: unknown, v: Microversion): void {
  if (raw === undefined) {
    if (v.atLeast('2.37')) throw schemaError('server', {}, "'networks' is a required property");
    return;
  }
  if (typeof raw === 'string') {
    if (!v.atLeast('2.37') || (raw !== 'none' && raw !== 'auto')) {
      throw schemaError('networks', raw, `${pyRepr(raw)} is not of type 'array'${v.atLeast('2.37') ? " and is not one of ['none', 'auto']" : ''}`);
    }
    return;
  }
  if (!Array.isArray(raw)) throw schemaError('networks', raw, `${pyRepr(raw)} is not of type 'array'`);
  raw.forEach((n, i) => {
    if (!isRecord(n)) throw schemaError(`networks/${i}`, n, `${pyRepr(n)} is not of type 'object'`);
    for (const k of Object.keys(n)) {
      if (!['uuid', 'port', 'fixed_ip', 'tag'].includes(k)) {
        throw schemaError(`networks/${i}`, n, `Additional properties are not allowed ('${k}' was unexpected)`);
      }
    }
    for (const k of ['uuid', 'port'] as const) {
      if (n[k] !== undefined && n[k] !== null && !isUuid(n[k])) throw schemaError(`networks/${i}/${k}`, n[k], `${pyRepr(n[k])} is not a 'uuid'`);
    }
  });
}

function parseMetadata(raw: unknown): Record<string, string> {
  if (raw === undefined) return {};
  if (!isRecord(raw)) throw schemaError('metadata', raw, `${pyRepr(raw)} is not of type 'object'`);
  for (const [k, val] of Object.entries(raw)) {
    if (!METADATA_KEY.test(k)) throw schemaError('metadata', raw, `Additional properties are not allowed ('${k}' was unexpected)`);
    if (typeof val !== 'string') throw schemaError(`metadata/${k}`, val, `${pyRepr(val)} is not of type 'string'`);
    if (val.length > 255) throw schemaError(`metadata/${k}`, val, `${pyRepr(val)} is too long`);
  }
  return { ...(raw as Record<string, string>) };
}

interface ZoneRequest {
  zone: string | null;
  host: string | null;
  node: string | null;
}

/** `ZONE`, `ZONE:HOST`, `ZONE:HOST:NODE` or `ZONE::NODE`, as nova-api splits it. */
function parseZone(raw: unknown): ZoneRequest {
  if (raw === undefined || raw === null) return { zone: null, host: null, node: null };
  if (typeof raw !== 'string' || raw.length < 1 || raw.length > 255) {
    throw schemaError('availability_zone', raw, `${pyRepr(raw)} is not a string of 1-255 characters`);
  }
  const parts = raw.split(':');
  if (parts.length > 3) throw new ApiError(400, `Invalid availability_zone '${raw}': expected ZONE, ZONE:HOST, ZONE:HOST:NODE or ZONE::NODE`);
  const [zone, host, node] = parts;
  return { zone: zone === '' ? null : zone, host: host ? host : null, node: node ? node : null };
}

function createServer(call: Call): SimResponse {
  const { req, ctx, caller, v } = call;
  const state = ctx.state;
  const body = jsonBody(req);
  if (!isRecord(body)) throw schemaError('(body)', body ?? null, "'server' is a required property");
  for (const k of Object.keys(body)) {
    if (!['server', 'os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints'].includes(k)) {
      throw schemaError('(body)', body, `Additional properties are not allowed ('${k}' was unexpected)`);
    }
  }
  const server = body.server;
  if (!isRecord(server)) throw schemaError('(body)', body, "'server' is a required property");
  const allowed = [...SERVER_KEYS_ALWAYS, ...SERVER_KEYS_SINCE.filter(([, since]) => v.atLeast(since)).map(([k]) => k)];
  for (const k of Object.keys(server)) {
    if (!allowed.includes(k)) throw schemaError('server', server, `Additional properties are not allowed ('${k}' was unexpected)`);
  }
  if (server.name === undefined) throw schemaError('server', server, "'name' is a required property");
  if (typeof server.name !== 'string' || !NAME_PATTERN.test(server.name)) {
    throw schemaError('name', server.name, `${pyRepr(server.name)} must be a string of 1-255 characters without leading or trailing whitespace`);
  }
  if (server.flavorRef === undefined) throw schemaError('server', server, "'flavorRef' is a required property");
  parseNetworks(server.networks, v);
  if (typeof server.flavorRef !== 'string' && typeof server.flavorRef !== 'number') {
    throw schemaError('flavorRef', server.flavorRef, `${pyRepr(server.flavorRef)} is not of type 'string', 'integer'`);
  }
  // The schema wants a UUID or '' (image_id_or_empty_string): a name or a link fails validation.
  if (server.imageRef !== undefined && !(typeof server.imageRef === 'string' && (server.imageRef === '' || isUuid(server.imageRef)))) {
    throw schemaError('imageRef', server.imageRef, `${pyRepr(server.imageRef)} is not valid under any of the given schemas`);
  }
  if (server.imageRef === undefined || server.imageRef === '') throw new ApiError(400, 'Missing imageRef attribute');
  const imageRef = server.imageRef as string;
  const flavorId = idFromRef(String(server.flavorRef));
  const flavor = FLAVORS.find((f) => f.id === flavorId);
  if (!flavor) throw new ApiError(400, `Flavor ${flavorId} could not be found.`);
  for (const k of ['min_count', 'max_count'] as const) {
    const n = server[k];
    if (n === undefined) continue;
    if (!(typeof n === 'number' || typeof n === 'string') || !/^[0-9]+$/.test(String(n)) || Number(n) < 1) {
      throw schemaError(k, n, `${pyRepr(n)} is not a positive integer`);
    }
    if (Number(n) !== 1) throw new ApiError(400, `The simulator creates one server per request: ${k} must be 1, got ${n}`);
  }
  const metadata = parseMetadata(server.metadata);
  if (server.key_name !== undefined && server.key_name !== null && (typeof server.key_name !== 'string' || server.key_name === '' || server.key_name.length > 255)) {
    throw schemaError('key_name', server.key_name, `${pyRepr(server.key_name)} is not a string of 1-255 characters`);
  }
  let userData: string | null = null;
  if (server.user_data !== undefined && server.user_data !== null) {
    if (typeof server.user_data !== 'string' || !BASE64.test(server.user_data.replace(/\s/g, ''))) {
      throw new ApiError(400, 'User data needs to be valid base 64.');
    }
    if (server.user_data.length > 65535) throw schemaError('user_data', '...', 'is too long (65535 characters at most)');
    userData = server.user_data;
  }
  if (server.description !== undefined && server.description !== null && (typeof server.description !== 'string' || server.description.length > 255)) {
    throw schemaError('description', server.description, `${pyRepr(server.description)} is not a string of at most 255 characters`);
  }
  let tags: string[] = [];
  if (server.tags !== undefined) {
    if (!Array.isArray(server.tags) || server.tags.length > 50) throw schemaError('tags', server.tags, 'must be a list of at most 50 tags');
    server.tags.forEach((t, i) => {
      if (typeof t !== 'string' || t.length < 1 || t.length > 60 || /[/,]/.test(t)) {
        throw schemaError(`tags/${i}`, t, `${pyRepr(t)} must be a string of 1-60 characters without '/' or ','`);
      }
    });
    tags = server.tags as string[];
  }

  const az = parseZone(server.availability_zone);
  if ((az.host !== null || az.node !== null) && !caller.isAdmin) throw policyDenied('os_compute_api:servers:create:forced_host');
  if (az.zone !== null && !state.hosts.some((h) => h.zone === az.zone)) {
    throw new ApiError(400, 'The requested availability zone is not available');
  }
  const requestedHost = typeof server.host === 'string' ? server.host : null;
  const requestedNode = typeof server.hypervisor_hostname === 'string' ? server.hypervisor_hostname : null;
  if (server.host !== undefined || server.hypervisor_hostname !== undefined) {
    if (!caller.isAdmin) throw policyDenied('compute:servers:create:requested_destination');
    if (requestedHost !== null && !state.hosts.some((h) => h.name === requestedHost)) {
      throw new ApiError(400, `Compute host ${requestedHost} could not be found.`);
    }
    if (requestedNode !== null && !state.hosts.some((h) => h.hypervisorHostname === requestedNode)) {
      throw new ApiError(400, `Compute host ${requestedNode} could not be found.`);
    }
  }

  const hints = body['os:scheduler_hints'] ?? body['OS-SCH-HNT:scheduler_hints'];
  let group: SimServerGroup | null = null;
  if (hints !== undefined) {
    if (!isRecord(hints)) throw schemaError('os:scheduler_hints', hints, `${pyRepr(hints)} is not of type 'object'`);
    if (hints.group !== undefined) {
      if (!isUuid(hints.group)) throw schemaError('os:scheduler_hints/group', hints.group, `${pyRepr(hints.group)} is not a 'uuid'`);
      const g = state.group(hints.group);
      if (!g || (g.projectId !== caller.project.id && !caller.isAdmin)) {
        throw new ApiError(400, `Instance group ${hints.group} could not be found.`);
      }
      group = g;
    }
  }

  const input: CreateServerInput = {
    name: server.name,
    projectId: caller.project.id,
    userId: caller.user.id,
    flavor,
    imageRef,
    metadata,
    keyName: typeof server.key_name === 'string' ? server.key_name : null,
    userData,
    description: typeof server.description === 'string' ? server.description : null,
    tags,
    zone: az.zone,
    forcedHost: az.host,
    forcedNode: az.node,
    requestedHost,
    requestedNode,
    group,
  };
  const created = state.createServer(input);
  const location = `${ctx.urls.computeUrl}/servers/${created.id}`;
  if (server.return_reservation_id === true || server.return_reservation_id === 'True') {
    return { status: 202, headers: { Location: location }, body: { reservation_id: created.reservationId } };
  }
  return {
    status: 202,
    headers: { Location: location },
    body: {
      server: {
        id: created.id,
        links: serverLinks(ctx.urls, created.id),
        'OS-DCF:diskConfig': 'MANUAL',
        security_groups: [{ name: 'default' }],
        adminPass: created.adminPass,
      },
    },
  };
}

// ---------- server groups ----------

const HARD_POLICIES: GroupPolicy[] = ['anti-affinity', 'affinity'];
const ALL_POLICIES: GroupPolicy[] = ['anti-affinity', 'affinity', 'soft-anti-affinity', 'soft-affinity'];

function listGroups(call: Call): SimResponse {
  const { req, ctx, caller, v } = call;
  // Nova quietly lists only the caller's groups when all_projects is not allowed.
  const all = caller.isAdmin && queryFlag(req.query, 'all_projects');
  let groups = ctx.state.groups().filter((g) => all || g.projectId === caller.project.id);
  const offset = parseLimit(req.query, 'offset') ?? 0;
  const limit = parseLimit(req.query);
  groups = groups.slice(offset, limit === null ? undefined : offset + limit);
  return { status: 200, body: { server_groups: groups.map((g) => serverGroupView(ctx.state, g, v)) } };
}

function ownedGroup(call: Call, id: string): SimServerGroup {
  const g = call.ctx.state.group(id);
  // Zed looks the group up within the caller's project (admins see every project): another
  // project's group does not exist for a member.
  if (!g || (g.projectId !== call.caller.project.id && !call.caller.isAdmin)) throw notFound(`Instance group ${id} could not be found.`);
  return g;
}

function showGroup(call: Call, id: string): SimResponse {
  return { status: 200, body: { server_group: serverGroupView(call.ctx.state, ownedGroup(call, id), call.v) } };
}

function deleteGroup(call: Call, id: string): SimResponse {
  call.ctx.state.deleteGroup(ownedGroup(call, id).id);
  return { status: 204 };
}

function createGroup(call: Call): SimResponse {
  const { req, ctx, caller, v } = call;
  const body = jsonBody(req);
  if (!isRecord(body) || !isRecord(body.server_group)) throw schemaError('(body)', body ?? null, "'server_group' is a required property");
  const sg = body.server_group;
  const modern = v.atLeast('2.64');
  const allowedPolicies = v.atLeast('2.15') ? ALL_POLICIES : HARD_POLICIES;
  const keys = modern ? ['name', 'policy', 'rules'] : ['name', 'policies'];
  for (const k of Object.keys(sg)) {
    if (!keys.includes(k)) throw schemaError('server_group', sg, `Additional properties are not allowed ('${k}' was unexpected)`);
  }
  if (sg.name === undefined) throw schemaError('server_group', sg, "'name' is a required property");
  if (typeof sg.name !== 'string' || !NAME_PATTERN.test(sg.name)) {
    throw schemaError('name', sg.name, `${pyRepr(sg.name)} must be a string of 1-255 characters without leading or trailing whitespace`);
  }
  let policy: GroupPolicy;
  const rules: { max_server_per_host?: number } = {};
  if (modern) {
    if (sg.policy === undefined) throw schemaError('server_group', sg, "'policy' is a required property");
    if (typeof sg.policy !== 'string' || !allowedPolicies.includes(sg.policy as GroupPolicy)) {
      throw schemaError('policy', sg.policy, `${pyRepr(sg.policy)} is not one of ${pyRepr(allowedPolicies)}`);
    }
    policy = sg.policy as GroupPolicy;
    if (sg.rules !== undefined) {
      if (!isRecord(sg.rules)) throw schemaError('rules', sg.rules, `${pyRepr(sg.rules)} is not of type 'object'`);
      for (const k of Object.keys(sg.rules)) {
        if (k !== 'max_server_per_host') throw schemaError('rules', sg.rules, `Additional properties are not allowed ('${k}' was unexpected)`);
      }
      const max = sg.rules.max_server_per_host;
      if (max !== undefined) {
        if (!(typeof max === 'number' || typeof max === 'string') || !/^[0-9]+$/.test(String(max)) || Number(max) < 1) {
          throw schemaError('rules/max_server_per_host', max, `${pyRepr(max)} is not a positive integer`);
        }
        rules.max_server_per_host = Number(max);
      }
      if (Object.keys(sg.rules).length > 0 && policy !== 'anti-affinity') throw new ApiError(400, 'Only anti-affinity policy supports rules.');
    }
  } else {
    const policies = sg.policies;
    if (policies === undefined) throw schemaError('server_group', sg, "'policies' is a required property");
    if (!Array.isArray(policies) || policies.length !== 1) {
      throw schemaError('policies', policies, `${pyRepr(policies)} must be a list of exactly one policy`);
    }
    if (typeof policies[0] !== 'string' || !allowedPolicies.includes(policies[0] as GroupPolicy)) {
      throw schemaError('policies/0', policies[0], `${pyRepr(policies[0])} is not one of ${pyRepr(allowedPolicies)}`);
    }
    policy = policies[0] as GroupPolicy;
  }
  const group = ctx.state.createGroup({ name: sg.name, policy, rules, projectId: caller.project.id, userId: caller.user.id });
  return { status: 200, body: { server_group: serverGroupView(ctx.state, group, v) } };
}

// ---------- zones, hypervisors, aggregates, flavors ----------

function availabilityZones(call: Call, detail: boolean): SimResponse {
  const { ctx, caller } = call;
  if (detail && !caller.isAdmin) throw policyDenied('os_compute_api:os-availability-zone:detail');
  const zones = [...new Set(ctx.state.hosts.map((h) => h.zone))];
  const updated = novaMicroTime(ctx.state.now());
  const service = () => ({ available: true, active: true, updated_at: updated });
  const info: Record<string, unknown>[] = zones.map((zone) => ({
    zoneName: zone,
    zoneState: { available: true },
    hosts: detail
      ? Object.fromEntries(ctx.state.hosts.filter((h) => h.zone === zone).map((h) => [h.name, { 'nova-compute': service() }]))
      : null,
  }));
  if (detail) {
    info.push({
      zoneName: 'internal',
      zoneState: { available: true },
      hosts: { 'os-controller': { 'nova-conductor': service(), 'nova-scheduler': service() } },
    });
  }
  return { status: 200, body: { availabilityZoneInfo: info } };
}

function listHypervisors(call: Call, detail: boolean): SimResponse {
  const { req, ctx, caller, v } = call;
  if (!caller.isAdmin) throw policyDenied(`os_compute_api:os-hypervisors:${detail ? 'list-detail' : 'list'}`);
  let loads = ctx.state.loads();
  const pattern = req.query.get('hypervisor_hostname_pattern');
  if (pattern !== null && v.atLeast('2.53')) {
    loads = loads.filter((l) => l.host.hypervisorHostname.includes(pattern));
    if (loads.length === 0) throw notFound(`No hypervisor matching '${pattern}' could be found.`);
  }
  if (v.atLeast('2.33')) {
    const marker = req.query.get('marker');
    if (marker !== null) {
      const at = loads.findIndex((l) => String(hypervisorId(ctx.state, l.host.name, v)) === marker);
      if (at < 0) throw new ApiError(400, `marker [${marker}] not found`);
      loads = loads.slice(at + 1);
    }
    const limit = parseLimit(req.query);
    if (limit !== null) loads = loads.slice(0, limit);
  }
  const withServers = v.atLeast('2.53') && queryFlag(req.query, 'with_servers');
  const onHosts = ctx.state
    .servers()
    .map((s) => ({ s, phase: ctx.state.phase(s) }))
    .filter(({ phase }) => phase.host !== null && phase.status !== 'DELETED');
  const hypervisors = loads.map((l) => {
    const view = hypervisorView(ctx.state, l, v, detail);
    if (withServers) {
      view.servers = onHosts.filter(({ phase }) => phase.host!.name === l.host.name).map(({ s }) => ({ uuid: s.id, name: s.name }));
    }
    return view;
  });
  return { status: 200, body: { hypervisors } };
}

function showHypervisor(call: Call, id: string): SimResponse {
  const { ctx, caller, v } = call;
  if (!caller.isAdmin) throw policyDenied('os_compute_api:os-hypervisors:show');
  const load = ctx.state.loads().find((l) => String(hypervisorId(ctx.state, l.host.name, v)) === id);
  if (!load) throw notFound(`Hypervisor with ID ${id} could not be found.`);
  return { status: 200, body: { hypervisor: hypervisorView(ctx.state, load, v, true) } };
}

function listAggregates(call: Call): SimResponse {
  const { ctx, caller } = call;
  if (!caller.isAdmin) throw policyDenied('os_compute_api:os-aggregates:index');
  const zones = [...new Set(ctx.state.hosts.map((h) => h.zone))];
  const aggregates = zones.map((zone, i) => ({
    id: i + 1,
    uuid: stableUuid('aggregate', zone),
    name: zone,
    hosts: ctx.state.hosts.filter((h) => h.zone === zone).map((h) => h.name),
    metadata: { availability_zone: zone },
    created_at: '2026-01-01T00:00:00.000000',
    updated_at: null,
    deleted_at: null,
    deleted: false,
    availability_zone: zone,
  }));
  return { status: 200, body: { aggregates } };
}

function listFlavors(call: Call, detail: boolean): SimResponse {
  return { status: 200, body: { flavors: FLAVORS.map((f) => flavorResourceView(f, call.ctx.urls, detail, call.v)) } };
}

function showFlavor(call: Call, id: string): SimResponse {
  const f = FLAVORS.find((x) => x.id === id);
  if (!f) throw notFound(`Flavor ${id} could not be found.`);
  return { status: 200, body: { flavor: flavorResourceView(f, call.ctx.urls, true, call.v) } };
}

// ---------- server actions ----------

/** vm_states each action may start from (nova/compute/api.py check_instance_state) */
const ACTION_FROM: Record<string, VmState[]> = {
  reboot: ['active', 'stopped', 'paused', 'suspended', 'rescued'],
  rebuild: ['active', 'stopped'],
  changePassword: ['active'],
  'os-start': ['stopped'],
  'os-stop': ['active', 'rescued'],
  pause: ['active', 'rescued'],
  unpause: ['paused'],
  suspend: ['active'],
  resume: ['suspended'],
  rescue: ['active', 'stopped'],
  unrescue: ['rescued'],
  migrate: ['active', 'stopped'],
  evacuate: ['active', 'stopped'],
  resize: ['active', 'stopped'],
  confirmResize: ['resized'],
  revertResize: ['resized'],
  lock: ['active', 'stopped', 'paused', 'suspended', 'rescued', 'resized'],
  unlock: ['active', 'stopped', 'paused', 'suspended', 'rescued', 'resized'],
};
/** Nova's instance action names (nova/compute/instance_actions.py) for the action bodies' keys */
const INSTANCE_ACTION: Record<string, string> = { 'os-start': 'start', 'os-stop': 'stop' };

/** the instance action an action request asks for (its body's one key; checked by serverAction) */
function actionName(call: Call): string {
  const body = jsonBody(call.req);
  const key = isRecord(body) ? (Object.keys(body)[0] ?? '') : '';
  return INSTANCE_ACTION[key] ?? key;
}

/**
 * Records an accepted request as an instance action of server `id` under the request id the
 * response carries (x-openstack-request-id), as Nova's API does before it casts to the compute host.
 */
function recorded(call: Call, id: string, action: string, res: SimResponse): SimResponse {
  if (res.status >= 300) return res;
  const s = call.ctx.state.server(id);
  if (!s) return res;
  const requestId = `req-${randomUUID()}`;
  (s.actions ??= []).push({ action, requestId, userId: call.caller.user.id, projectId: call.caller.project.id, startedAt: call.ctx.state.now() });
  return { ...res, headers: { ...res.headers, 'x-openstack-request-id': requestId } };
}

function createServerRecorded(call: Call): SimResponse {
  const res = createServer(call);
  const body = res.body as { server?: { id?: string } } | undefined;
  return body?.server?.id ? recorded(call, body.server.id, 'create', res) : res;
}

/**
 * GET /servers/{id}/os-instance-actions: the server's actions, newest first, in Nova's shape
 * (captured from the reference cloud: start_time in whole seconds, `updated_at` from 2.58, here the
 * same as start_time). A server the caller cannot see, or one deleted, is a 404 (before 2.21).
 */
function listInstanceActions(call: Call, id: string): SimResponse {
  const s = visibleServer(call, id);
  if (call.ctx.state.status(s) === 'DELETED') throw notFound(`Instance ${id} could not be found.`);
  const seconds = (ms: number) => novaMicroTime(Math.floor(ms / 1000) * 1000);
  const instanceActions = [...(s.actions ?? [])].reverse().map((a) => ({
    action: a.action,
    instance_uuid: s.id,
    request_id: a.requestId,
    user_id: a.userId,
    project_id: a.projectId,
    start_time: seconds(a.startedAt),
    message: null,
    ...(call.v.atLeast('2.58') ? { updated_at: seconds(a.startedAt) } : {}),
  }));
  return { status: 200, body: { instanceActions } };
}

/** actions only an admin may run (Nova's default policy) */
const ADMIN_ACTIONS: Record<string, string> = {
  migrate: 'os_compute_api:os-migrate-server:migrate',
  evacuate: 'os_compute_api:os-evacuate',
};

/**
 * POST /servers/{id}/action: the actions Senlin's server profile runs, with Nova's answers: 404 for
 * a server the caller cannot see, 409 for a locked server or one in the wrong state, 400 for an
 * unknown action or a bad body, 403 for an admin-only action; 202 (rescue 200) when accepted, the
 * server showing the action's status and task_state until it settles.
 */
function serverAction(call: Call, id: string): SimResponse {
  const { state } = call.ctx;
  const body = jsonBody(call.req);
  if (!isRecord(body) || Object.keys(body).length !== 1) throw new ApiError(400, 'Malformed request body');
  const name = Object.keys(body)[0];
  const args = body[name];
  if (!(name in ACTION_FROM)) throw new ApiError(400, `There is no such action: ${name}`);
  const s = visibleServer(call, id);
  if (ADMIN_ACTIONS[name] && !call.caller.isAdmin) throw policyDenied(ADMIN_ACTIONS[name]);
  if (state.status(s) === 'DELETED') throw notFound(`Instance ${id} could not be found.`);
  const { vmState, busy } = state.vmStateOf(s);
  if (s.locked && name !== 'unlock' && name !== 'lock' && !call.caller.isAdmin) {
    throw new ApiError(409, `Instance ${id} is locked`);
  }
  const phase = state.phase(s);
  if (vmState === null || !ACTION_FROM[name].includes(vmState) || busy !== null) {
    if (busy !== null) {
      throw new ApiError(409, `Cannot '${name}' instance ${id} while it is in task_state ${busy}`);
    }
    throw new ApiError(409, `Cannot '${name}' instance ${id} while it is in vm_state ${vmState ?? (phase.status === 'BUILD' ? 'building' : phase.status.toLowerCase())}`);
  }
  const record = isRecord(args) ? args : {};
  switch (name) {
    case 'reboot': {
      const type = isRecord(args) ? args.type : undefined;
      if (type !== 'SOFT' && type !== 'HARD' && type !== 'soft' && type !== 'hard') {
        throw schemaError('reboot.type', type ?? null, `${pyRepr(type ?? null)} is not one of ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']`);
      }
      const hard = String(type).toUpperCase() === 'HARD';
      state.startTask(s, hard ? 'HARD_REBOOT' : 'REBOOT', hard ? 'rebooting_hard' : 'rebooting', 'active');
      return { status: 202 };
    }
    case 'rebuild': {
      if (typeof record.imageRef !== 'string' || record.imageRef === '') {
        throw schemaError('rebuild', args ?? null, "'imageRef' is a required property");
      }
      // as at create, any image id is taken (specs boot from the reference cloud's image id)
      s.imageRef = idFromRef(record.imageRef);
      if (typeof record.name === 'string' && record.name) s.name = record.name;
      state.startTask(s, 'REBUILD', 'rebuilding', 'active');
      return { status: 202, body: { server: serverView(state, s, call.caller, call.v, call.ctx.urls) } };
    }
    case 'changePassword':
      if (typeof record.adminPass !== 'string') throw schemaError('changePassword', args ?? null, "'adminPass' is a required property");
      s.adminPass = record.adminPass;
      state.startTask(s, 'PASSWORD', 'updating_password', vmState);
      return { status: 202 };
    case 'os-start':
      state.startTask(s, 'SHUTOFF', 'powering-on', 'active');
      return { status: 202 };
    case 'os-stop':
      state.startTask(s, 'ACTIVE', 'powering-off', 'stopped');
      return { status: 202 };
    case 'pause':
      state.startTask(s, 'ACTIVE', 'pausing', 'paused');
      return { status: 202 };
    case 'unpause':
      state.startTask(s, 'PAUSED', 'unpausing', 'active');
      return { status: 202 };
    case 'suspend':
      state.startTask(s, 'ACTIVE', 'suspending', 'suspended');
      return { status: 202 };
    case 'resume':
      state.startTask(s, 'SUSPENDED', 'resuming', 'active');
      return { status: 202 };
    case 'rescue': {
      const pass = typeof record.adminPass === 'string' ? record.adminPass : s.adminPass;
      state.startTask(s, phase.status, 'rescuing', 'rescued');
      return { status: 200, body: { adminPass: pass } };
    }
    case 'unrescue':
      state.startTask(s, 'RESCUE', 'unrescuing', 'active');
      return { status: 202 };
    case 'resize': {
      // nova/api/openstack/compute/servers.py _resize; the host keeps the server (allow_resize_to_same_host)
      if (record.flavorRef === undefined) throw schemaError('resize', args ?? null, "'flavorRef' is a required property");
      const flavor = FLAVORS.find((f) => f.id === idFromRef(String(record.flavorRef)));
      if (!flavor) throw new ApiError(400, 'Unable to locate requested flavor.');
      if (flavor.id === s.flavor.id) throw new ApiError(400, 'Resize requires a flavor change.');
      s.resize = { oldFlavor: s.flavor, from: vmState };
      s.flavor = flavor;
      state.startTask(s, 'RESIZE', 'resize_migrating', 'resized');
      return { status: 202 };
    }
    case 'confirmResize':
      // no task state: the server shows VERIFY_RESIZE until the compute host has confirmed
      state.startTask(s, 'VERIFY_RESIZE', null, s.resize?.from ?? 'active');
      s.resize = null;
      return { status: 204 };
    case 'revertResize':
      if (s.resize) s.flavor = s.resize.oldFlavor;
      state.startTask(s, 'REVERT_RESIZE', 'resize_reverting', s.resize?.from ?? 'active');
      s.resize = null;
      return { status: 202 };
    case 'migrate':
    case 'evacuate':
      state.startTask(s, phase.status, 'resize_migrating', vmState);
      return { status: 202 };
    case 'lock':
      s.locked = true;
      s.touchedAt = state.now();
      return { status: 202 };
    default:
      s.locked = false;
      s.touchedAt = state.now();
      return { status: 202 };
  }
}
