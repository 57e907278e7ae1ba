import { badRequest, conflict, type OpenStackSettings } from '@trellis/common';
import {
  backoffDelay,
  createSession,
  pathOf,
  resolveClientOptions,
  type HttpResponse,
  type KeystoneClientOptions,
  type KeystoneSession,
  type ResolvedClientOptions,
} from '@trellis/identity';
import { findServerFor, tagOf } from './idempotency';
import { MV, atLeast, chooseMicroversion, microversionHeaders, readVersionDocument } from './microversion';
import * as shape from './normalise';
import { NovaError, NovaForbiddenError, NovaMicroversionError, NovaResponseError, type OpenStackService } from './nova.errors';
import type { AvailabilityZone, CreatedServer, Hypervisor, NovaPort, Server, ServerAction, ServerCreateRequest, ServerGroup, ServerGroupPolicy, ServerListFilter } from './nova.port';

export interface NovaClientOptions extends KeystoneClientOptions {
  /** page size for listing servers and server groups (default 200) */
  pageSize?: number;
  /** how long an image or flavor name → id lookup is reused (default 5 min) */
  lookupCacheMs?: number;
}

export interface ResolvedOptions extends ResolvedClientOptions {
  pageSize: number;
  lookupCacheMs: number;
}

export function resolveOptions(options: NovaClientOptions): ResolvedOptions {
  return { ...resolveClientOptions(options), pageSize: options.pageSize ?? 200, lookupCacheMs: options.lookupCacheMs ?? 300_000 };
}

/** The NovaPort over HTTP for these settings. Throws ConfigError naming a missing or bad setting. */
export function createNovaClient(settings: OpenStackSettings, options: NovaClientOptions = {}): NovaHttpClient {
  const { session, resolved } = createSession(settings, options, resolveOptions(options));
  return new NovaHttpClient(session, resolved);
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

interface ComputeApi {
  endpoint: string;
  microversion: string;
}

interface CallOptions {
  body?: unknown;
  accept?: number[];
}

export class NovaHttpClient implements NovaPort {
  private api: Promise<ComputeApi> | null = null;
  private readonly lookups = new Map<string, { id: string; at: number }>();

  constructor(
    readonly session: KeystoneSession,
    private readonly options: ResolvedOptions,
  ) {}

  async microversion(): Promise<string> {
    return (await this.computeApi()).microversion;
  }

  async listServerGroups(): Promise<ServerGroup[]> {
    const size = this.options.pageSize;
    const groups = new Map<string, ServerGroup>();
    for (let offset = 0; ; offset += size) {
      const { body, read } = await this.call('server_groups.list', 'GET', `/os-server-groups?limit=${size}&offset=${offset}`);
      const page = read(() => shape.array(shape.object(body, 'body').server_groups, 'server_groups').map((g, i) => shape.serverGroup(g, `server_groups[${i}]`)));
      const fresh = page.filter((g) => !groups.has(g.id));
      for (const g of fresh) groups.set(g.id, g);
      // a Nova that ignores offset would hand back the same page forever
      if (page.length < size || fresh.length === 0) break;
    }
    return [...groups.values()];
  }

  async getServerGroup(id: string): Promise<ServerGroup | null> {
    const { status, body, read } = await this.call('server_groups.get', 'GET', `/os-server-groups/${encodeURIComponent(id)}`, { accept: [404] });
    if (status === 404) return null;
    return read(() => shape.serverGroup(shape.object(body, 'body').server_group));
  }

  async findServerGroup(nameOrId: string): Promise<ServerGroup | null> {
    if (!nameOrId) throw badRequest('server group name or id must not be empty');
    const byId = await this.getServerGroup(nameOrId);
    if (byId) return byId;
    const named = (await this.listServerGroups()).filter((g) => g.name === nameOrId);
    if (named.length > 1) {
      throw conflict(`${named.length} server groups are named '${nameOrId}' (${named.map((g) => g.id).join(', ')}); name the group by its id`);
    }
    return named[0] ?? null;
  }

  async createServerGroup(name: string, policy: ServerGroupPolicy, rules: Record<string, unknown> = {}): Promise<ServerGroup> {
    if (!name) throw badRequest('server group name must not be empty');
    if (!shape.SERVER_GROUP_POLICIES.includes(policy)) {
      throw badRequest(`server group policy '${policy}' is not one of ${shape.SERVER_GROUP_POLICIES.join(', ')}`);
    }
    const mv = await this.microversion();
    const hasRules = Object.keys(rules).length > 0;
    if (policy.startsWith('soft-') && !atLeast(mv, MV.SOFT_POLICIES)) {
      throw new NovaMicroversionError(`server group policy '${policy}' needs compute microversion ${MV.SOFT_POLICIES}; this Nova is used at ${mv}`);
    }
    if (hasRules && !atLeast(mv, MV.GROUP_POLICY_RULES)) {
      throw new NovaMicroversionError(`server group rules need compute microversion ${MV.GROUP_POLICY_RULES}; this Nova is used at ${mv}`);
    }
    if (hasRules && policy !== 'anti-affinity') {
      throw badRequest(`server group rules are allowed only with the anti-affinity policy, not '${policy}'`);
    }
    const group = atLeast(mv, MV.GROUP_POLICY_RULES) ? { name, policy, ...(hasRules ? { rules } : {}) } : { name, policies: [policy] };
    const { made } = await this.createWithRecovery(
      async () => {
        const { body, read } = await this.call('server_groups.create', 'POST', '/os-server-groups', { body: { server_group: group } });
        return read(() => shape.serverGroup(shape.object(body, 'body').server_group));
      },
      // callers create a group only after finding none by that name, so one that appeared is ours
      async () => {
        const named = (await this.listServerGroups()).filter((g) => g.name === name && g.policy === policy);
        return named.length === 1 ? named[0] : null;
      },
    );
    return made;
  }

  async deleteServerGroup(id: string): Promise<void> {
    await this.call('server_groups.delete', 'DELETE', `/os-server-groups/${encodeURIComponent(id)}`, { accept: [404] });
  }

  async createServer(request: ServerCreateRequest): Promise<CreatedServer> {
    for (const field of ['name', 'imageRef', 'flavorRef'] as const) {
      if (typeof request[field] !== 'string' || request[field] === '') throw badRequest(`server ${field} must be a non-empty string`);
    }
    const mv = await this.microversion();
    const [imageRef, flavorRef] = await Promise.all([this.resolveImage(request.imageRef), this.resolveFlavor(request.flavorRef)]);
    const server: Record<string, unknown> = { name: request.name, imageRef, flavorRef };
    if (atLeast(mv, MV.NETWORKS_KEYWORDS)) server.networks = request.networks;
    else if (Array.isArray(request.networks)) server.networks = request.networks;
    // before 2.37 "none" and "auto" do not exist; leaving networks out is the old way to say either
    if (request.availabilityZone) server.availability_zone = request.availabilityZone;
    if (request.metadata && Object.keys(request.metadata).length > 0) server.metadata = request.metadata;
    if (request.keyName) server.key_name = request.keyName;
    if (request.userData) server.user_data = Buffer.from(request.userData, 'utf8').toString('base64');
    const body: Record<string, unknown> = { server };
    if (request.schedulerHints && Object.keys(request.schedulerHints).length > 0) body['os:scheduler_hints'] = request.schedulerHints;

    const tag = tagOf(request.metadata);
    const { made, uncertain } = await this.createWithRecovery(
      async () => {
        const res = await this.call('servers.create', 'POST', '/servers', { body });
        return res.read(() => {
          const created = shape.object(shape.object(res.body, 'body').server, 'server');
          if (typeof created.id !== 'string' || created.id === '') throw new shape.ShapeError('server.id is missing');
          return { id: created.id };
        });
      },
      tag
        ? async () => {
            const found = await findServerFor(this, tag);
            return found ? { id: found.id } : null;
          }
        : null,
    );
    return uncertain ? { id: made.id, uncertain } : { id: made.id };
  }

  async getServer(id: string): Promise<Server | null> {
    const { status, body, read } = await this.call('servers.get', 'GET', `/servers/${encodeURIComponent(id)}`, { accept: [404] });
    if (status === 404) return null;
    return read(() => shape.server(shape.object(body, 'body').server));
  }

  async listServers(filter: ServerListFilter = {}): Promise<Server[]> {
    const size = this.options.pageSize;
    const servers = new Map<string, Server>();
    let marker: string | null = null;
    for (;;) {
      const query = new URLSearchParams({ limit: String(size) });
      if (filter.name) query.set('name', filter.name);
      if (filter.changesSince) query.set('changes-since', filter.changesSince.toISOString());
      if (marker) query.set('marker', marker);
      const { body, read } = await this.call('servers.list', 'GET', `/servers/detail?${query}`);
      const page = read(() => shape.array(shape.object(body, 'body').servers, 'servers').map((s, i) => shape.server(s, `servers[${i}]`)));
      const fresh = page.filter((s) => !servers.has(s.id));
      for (const s of fresh) servers.set(s.id, s);
      if (page.length < size || fresh.length === 0) break;
      marker = page[page.length - 1].id;
    }
    // Nova has no metadata filter on the server list
    const wanted = Object.entries(filter.metadata ?? {});
    return [...servers.values()].filter((s) => wanted.every(([k, v]) => s.metadata[k] === v));
  }

  async deleteServer(id: string): Promise<void> {
    await this.call('servers.delete', 'DELETE', `/servers/${encodeURIComponent(id)}`, { accept: [404] });
  }

  async serverAction(id: string, request: ServerAction): Promise<void> {
    const path = `/servers/${encodeURIComponent(id)}/action`;
    let body: Record<string, unknown>;
    switch (request.action) {
      case 'reboot':
        body = { reboot: { type: request.type } };
        break;
      case 'rebuild': {
        let imageRef = request.imageRef ? await this.resolveImage(request.imageRef) : null;
        if (!imageRef) {
          const server = await this.getServer(id);
          if (!server) throw new NovaError({ service: 'compute', status: 404, method: 'GET', path: `/servers/${id}`, serviceMessage: `Instance ${id} could not be found.` });
          imageRef = server.imageId ?? null;
          if (!imageRef) throw badRequest(`server ${id} was not booted from an image: rebuild needs an image`);
        }
        const rebuild: Record<string, unknown> = { imageRef };
        if (request.name) rebuild.name = request.name;
        if (request.adminPass) rebuild.adminPass = request.adminPass;
        body = { rebuild };
        break;
      }
      case 'changePassword':
        body = { changePassword: { adminPass: request.adminPass } };
        break;
      case 'rescue': {
        const rescue: Record<string, unknown> = {};
        if (request.rescueImageRef) rescue.rescue_image_ref = await this.resolveImage(request.rescueImageRef);
        if (request.adminPass) rescue.adminPass = request.adminPass;
        body = { rescue };
        break;
      }
      case 'resize':
        body = { resize: { flavorRef: await this.resolveFlavor(request.flavorRef) } };
        break;
      case 'evacuate': {
        const evacuate: Record<string, unknown> = {};
        if (request.host) evacuate.host = request.host;
        if (request.force !== undefined) evacuate.force = request.force;
        body = { evacuate };
        break;
      }
      default:
        body = { [request.action]: null };
    }
    await this.call('servers.action', 'POST', path, { body });
  }

  async updateServer(id: string, changes: { name: string }): Promise<void> {
    await this.call('servers.update', 'PUT', `/servers/${encodeURIComponent(id)}`, { body: { server: { name: changes.name } } });
  }

  async setServerMetadata(id: string, metadata: Record<string, string>): Promise<void> {
    await this.call('servers.metadata', 'PUT', `/servers/${encodeURIComponent(id)}/metadata`, { body: { metadata } });
  }

  async listAvailabilityZones(detail = false): Promise<AvailabilityZone[]> {
    try {
      const { body, read } = await this.call('availability_zones.list', 'GET', detail ? '/os-availability-zone/detail' : '/os-availability-zone');
      return read(() => shape.availabilityZones(body));
    } catch (e) {
      throw adminOnly(e, 'listing the hosts of availability zones');
    }
  }

  async listHypervisors(): Promise<Hypervisor[]> {
    const mv = await this.microversion();
    // limit and marker exist from 2.33 on
    const paged = atLeast(mv, '2.33');
    const size = this.options.pageSize;
    const hypervisors = new Map<string, Hypervisor>();
    let marker: string | null = null;
    try {
      for (;;) {
        const query = new URLSearchParams();
        if (paged) query.set('limit', String(size));
        if (marker) query.set('marker', marker);
        const qs = query.toString();
        const { body, read } = await this.call('hypervisors.list', 'GET', `/os-hypervisors/detail${qs ? `?${qs}` : ''}`);
        const page = read(() => shape.array(shape.object(body, 'body').hypervisors, 'hypervisors').map((h, i) => shape.hypervisor(h, `hypervisors[${i}]`)));
        const fresh = page.filter((h) => !hypervisors.has(h.id));
        for (const h of fresh) hypervisors.set(h.id, h);
        if (!paged || page.length < size || fresh.length === 0) break;
        marker = page[page.length - 1].id;
      }
    } catch (e) {
      throw adminOnly(e, 'listing hypervisors');
    }
    return [...hypervisors.values()];
  }

  private computeApi(): Promise<ComputeApi> {
    if (!this.api) {
      this.api = this.negotiate().catch((e) => {
        this.api = null;
        throw e;
      });
    }
    return this.api;
  }

  private async negotiate(): Promise<ComputeApi> {
    const endpoint = await this.session.endpoint('compute');
    const pinned = this.session.credentials.computeApiVersion;
    if (pinned) return { endpoint, microversion: pinned };
    const root = `${new URL(endpoint).origin}/`;
    const answers: string[] = [];
    for (const url of endpoint === root.replace(/\/$/, '') ? [endpoint] : [endpoint, root]) {
      const res = await this.session.request({ service: 'compute', operation: 'versions.get', method: 'GET', url, idempotent: true, accept: [300, 404] });
      const doc = readVersionDocument(res.body);
      if (doc) {
        const microversion = chooseMicroversion(doc);
        // an endpoint that is the service root (an override such as http://nova:8774) lists the
        // versions; the v2.1 API then lives under the URL that list gives
        const base = url === endpoint && doc.href ? doc.href.replace(/\/+$/, '') : endpoint;
        this.options.runtime.logger.debug?.(`Nova at ${base} offers compute ${doc.min ?? '2.1'}..${doc.max ?? '2.1'}; using ${microversion}`);
        return { endpoint: base, microversion };
      }
      answers.push(`GET ${pathOf(url)} answered ${res.status}`);
    }
    const problem = `no compute version document (${answers.join('; ')})`;
    throw new NovaResponseError({ service: 'compute', status: null, method: 'GET', path: pathOf(endpoint), serviceMessage: problem, problem });
  }

  /** `operation` names the call in the metrics (`servers.create`): a fixed name, never built from the path. */
  private async call(operation: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: CallOptions = {}) {
    return this.send('compute', operation, method, `${(await this.computeApi()).endpoint}${path}`, options, microversionHeaders(await this.microversion()));
  }

  private async send(
    service: OpenStackService,
    operation: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: CallOptions,
    headers: Record<string, string> = {},
  ) {
    const res: HttpResponse = await this.session.request({
      service,
      operation,
      method,
      url,
      headers,
      body: options.body,
      accept: options.accept,
      idempotent: method !== 'POST',
      // a 409 on a create is a lasting problem (quota, "Multiple possible networks found"), not a task state
      retryConflicts: method !== 'POST',
    });
    const read = <T>(fn: () => T): T => {
      try {
        return fn();
      } catch (e) {
        if (!(e instanceof shape.ShapeError)) throw e;
        throw new NovaResponseError({ service, status: res.status, method, path: pathOf(url), serviceMessage: e.problem, problem: e.problem });
      }
    };
    return { status: res.status, body: res.body, read };
  }

  /**
   * A create whose outcome is unknown (timeout, reset, 5xx) may have happened: look for what it
   * would have made before sending it again. Without a way to look, it is not repeated. `uncertain`
   * says a try's outcome was lost: what was made may not be the only thing made.
   */
  private async createWithRecovery<T>(create: () => Promise<T>, recover: (() => Promise<T | null>) | null): Promise<{ made: T; uncertain: boolean }> {
    const { retry, runtime } = this.options;
    for (let attempt = 1; ; attempt++) {
      try {
        return { made: await create(), uncertain: attempt > 1 };
      } catch (e) {
        if (!(e instanceof NovaError) || !e.ambiguous || recover === null || attempt >= retry.attempts) throw e;
        runtime.logger.warn?.(`${e.message}; looking for what the create may have made before try ${attempt + 1}/${retry.attempts}`);
        await runtime.sleep(Math.max(backoffDelay(attempt - 1, retry, runtime.random), retry.ambiguousSettleMs ?? 0));
        const found = await recover();
        if (found) return { made: found, uncertain: true };
      }
    }
  }

  private cached(key: string): string | null {
    const hit = this.lookups.get(key);
    if (hit && this.options.runtime.now() - hit.at < this.options.lookupCacheMs) return hit.id;
    this.lookups.delete(key);
    return null;
  }

  private remember(key: string, id: string): string {
    this.lookups.set(key, { id, at: this.options.runtime.now() });
    return id;
  }

  /**
   * Nova boots only from an image id. A name is looked up in Glance when the catalog has one;
   * without Glance the ref goes to Nova as given, and Nova judges it. A name Glance does not know
   * is refused here: real Nova's answer to it ("'x' is not valid under any of the given schemas")
   * does not say that no image has that name.
   */
  private async resolveImage(ref: string): Promise<string> {
    if (UUID.test(ref)) return ref;
    const hit = this.cached(`image:${ref}`);
    if (hit) return hit;
    const glance = await this.session.optionalEndpoint('image');
    if (!glance) return ref;
    const url = `${glance.replace(/\/v2$/, '')}/v2/images?${new URLSearchParams({ name: ref })}`;
    const { body, read } = await this.send('image', 'images.list', 'GET', url, {});
    const ids = read(() =>
      shape.array(shape.object(body, 'body').images, 'images').map((img, i) => {
        const id = shape.object(img, `images[${i}]`).id;
        if (typeof id !== 'string' || id === '') throw new shape.ShapeError(`images[${i}].id is not a string`);
        return id;
      }),
    );
    if (ids.length > 1) throw badRequest(`${ids.length} images are named '${ref}' (${ids.join(', ')}); give the image id`);
    if (ids.length === 0) throw badRequest(`server imageRef '${ref}' is neither an image id nor the name of an image in Glance`);
    return this.remember(`image:${ref}`, ids[0]);
  }

  /** A flavor id is used as is; a flavor name is looked up in Nova's flavor list. */
  private async resolveFlavor(ref: string): Promise<string> {
    const hit = this.cached(`flavor:${ref}`);
    if (hit) return hit;
    const byId = await this.call('flavors.get', 'GET', `/flavors/${encodeURIComponent(ref)}`, { accept: [404] });
    if (byId.status !== 404) return this.remember(`flavor:${ref}`, ref);
    const list = await this.call('flavors.list', 'GET', '/flavors?is_public=None', { accept: [404] });
    if (list.status === 404) return ref;
    const flavors = list.read(() => shape.array(shape.object(list.body, 'body').flavors, 'flavors').map((f, i) => shape.object(f, `flavors[${i}]`)));
    const named = flavors.filter((f) => f.name === ref && typeof f.id === 'string');
    if (named.length > 1) throw badRequest(`${named.length} flavors are named '${ref}'; give the flavor id`);
    return named.length === 1 ? this.remember(`flavor:${ref}`, named[0].id as string) : ref;
  }
}

function adminOnly(error: unknown, what: string): unknown {
  if (!(error instanceof NovaForbiddenError)) return error;
  return new NovaForbiddenError({
    service: error.service,
    status: error.status,
    method: error.method,
    path: error.path,
    serviceMessage: error.serviceMessage,
    message: `${what} needs the admin role (Nova answered 403: ${error.serviceMessage})`,
  });
}
