import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPENSTACK_REQUEST_ID, silentLogger, type Logger } from '@trellis/common';
import { handleCompute, novaFault, type ComputeContext } from './compute.routes';
import { handleControl } from './control.routes';
import type { Fault } from './faults';
import type { SimRequest, SimResponse } from './http-kit';
import { stableId } from './identity';
import { handleImage } from './image.routes';
import { handleNetwork } from './network.routes';
import { handleIdentity, keystoneError, type IdentityContext } from './keystone.routes';
import { Microversion } from './microversion';
import { SimulatorState } from './simulator-state';
import { SimulatorStateFile } from './state-file';
import { DEFAULT_TOPOLOGY, validateTopology, type Topology } from './topology';

export { loadTopology, DEFAULT_TOPOLOGY, TopologyError, type Topology, type TopologyHost, type TopologyZone } from './topology';
export { SimulatorState, FLAVORS, IMAGE, IMAGES } from './simulator-state';
export { stableId } from './identity';
export { StateFileError } from './state-file';

export interface SimulatorOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** 0 (the default) picks a free port */
  port?: number;
  /**
   * BUILD → ACTIVE delay; the scheduler runs after a quarter of it, and a deleted server stays
   * visible (deleting, then DELETED) as long. Default 500; 0 = all at the next request.
   */
  buildDelayMs?: number;
  /** default: zones az1 (host-1..3) and az2 (host-4..6), host-6's hypervisor is `vsphere-drs-cluster-6` */
  topology?: Topology;
  /** default 'demo' (also alt_demo's password) */
  demoPassword?: string;
  /** default 'admin' */
  adminPassword?: string;
  /** the password of `trellis` (project `service`), the user trusts delegate to; default 'service-secret' */
  servicePassword?: string;
  /** when set, the catalog also lists a 'clustering' service (senlin) at this URL */
  clusteringUrl?: string;
  /** the highest compute microversion; default '2.93' (Zed). Lets tests simulate an older Nova. */
  maxMicroversion?: string;
  /** token lifetime; default 86400 (Keystone's 24 h) */
  tokenLifetimeSeconds?: number;
  /** where unexpected errors are logged; default: nowhere */
  logger?: Logger;
  /** the base URL the catalog advertises, when clients reach the simulator by another name (compose) */
  publicUrl?: string;
  /**
   * A file to keep the state in (servers, server groups, Keystone's tokens, trusts and application
   * credentials): loaded at start when it exists, saved shortly after each change and at close.
   * Unset: the state lives in memory only.
   */
  stateFile?: string;
}

export interface RunningSimulator {
  /** `http://host:port` */
  url: string;
  /** `<url>/identity/v3` */
  authUrl: string;
  /** `<url>/compute/v2.1` */
  computeUrl: string;
  port: number;
  state: SimulatorState;
  /** servers loaded from `stateFile` at start (null: no file, or none given) */
  restoredServers: number | null;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;
const INTERFACES = ['public', 'internal', 'admin'];

function catalogEntry(type: string, name: string, url: string) {
  return {
    id: stableId('service', type),
    type,
    name,
    endpoints: INTERFACES.map((iface) => ({
      id: stableId('endpoint', `${type}/${iface}`),
      interface: iface,
      region_id: 'RegionOne',
      region: 'RegionOne',
      url,
    })),
  };
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function validatedOptions(o: SimulatorOptions) {
  const int = (name: string, v: number | undefined, dflt: number, min: number, max: number) => {
    const n = v ?? dflt;
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`SimulatorOptions.${name} must be a whole number between ${min} and ${max}, got ${v}`);
    return n;
  };
  const maxText = o.maxMicroversion ?? '2.93';
  const maxVersion = Microversion.parse(maxText);
  if (!maxVersion || maxVersion.major !== 2 || maxVersion.minor < 1) {
    throw new Error(`SimulatorOptions.maxMicroversion must look like 2.X with X >= 1, got '${maxText}'`);
  }
  if (o.clusteringUrl !== undefined) {
    try {
      new URL(o.clusteringUrl);
    } catch {
      throw new Error(`SimulatorOptions.clusteringUrl is not a valid URL: '${o.clusteringUrl}'`);
    }
  }
  return {
    host: o.host ?? '127.0.0.1',
    port: int('port', o.port, 0, 0, 65535),
    buildDelayMs: int('buildDelayMs', o.buildDelayMs, 500, 0, 3_600_000),
    tokenLifetimeSeconds: int('tokenLifetimeSeconds', o.tokenLifetimeSeconds, 86400, 1, 604_800),
    topology: validateTopology(o.topology ?? DEFAULT_TOPOLOGY),
    maxVersion,
  };
}

/** Starts the fake Keystone + Nova (+ a one-image Glance) on its own port. */
export async function startNovaSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const opts = validatedOptions(options);
  const logger = options.logger ?? silentLogger;
  const state = new SimulatorState({
    topology: opts.topology,
    buildDelayMs: opts.buildDelayMs,
    adminPassword: options.adminPassword ?? 'admin',
    demoPassword: options.demoPassword ?? 'demo',
    servicePassword: options.servicePassword ?? 'service-secret',
    tokenLifetimeMs: opts.tokenLifetimeSeconds * 1000,
  });

  const stateFile = options.stateFile ? new SimulatorStateFile(options.stateFile, state, logger) : null;
  const restoredServers = stateFile?.load() ?? null;

  let identityCtx: IdentityContext;
  let computeCtx: ComputeContext;
  let imageUrl = '';
  const pendingDelays = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  const dispatch = (req: SimRequest): SimResponse => {
    const p = req.path;
    const under = (prefix: string) => p === prefix || p.startsWith(prefix + '/');
    if (under('/identity')) return handleIdentity(req, p.slice('/identity'.length), identityCtx);
    if (under('/compute')) return handleCompute(req, p.slice('/compute'.length), computeCtx, identityCtx.authUrl);
    if (under('/image')) return handleImage(req, p.slice('/image'.length), state.identity);
    if (under('/network')) return handleNetwork(req, p.slice('/network'.length), state.identity);
    if (p === '/' || p === '') {
      return { status: 200, body: { identity: identityCtx.authUrl, compute: computeCtx.urls.computeUrl, image: imageUrl } };
    }
    return { status: 404, body: { error: { code: 404, message: `nothing at ${p}` } } };
  };

  const faultResponse = (fault: Fault, path: string): SimResponse => {
    const status = fault.status!;
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== null) headers['Retry-After'] = String(fault.retryAfter);
    if (fault.body !== undefined) return { status, headers, body: fault.body };
    const message = `Injected fault ${fault.id} (simulator): HTTP ${status}`;
    if (path.startsWith('/identity')) return keystoneError(status, message, headers);
    const res = novaFault(status, message, headers);
    if ((status === 429 || status === 413) && fault.retryAfter !== null) {
      (res.body as { overLimit: Record<string, unknown> }).overLimit.retryAfter = String(fault.retryAfter);
    }
    return res;
  };

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => (pendingDelays.delete(entry), resolve()), ms), resolve };
      pendingDelays.add(entry);
    });

  const send = (req: IncomingMessage, res: ServerResponse, r: SimResponse) => {
    if (res.destroyed || res.writableEnded) return;
    const requestId = `req-${randomUUID()}`;
    const headers: Record<string, string> = { 'x-openstack-request-id': requestId, ...r.headers };
    // as Nova's API log line: its own request id, and the caller's as the global request id when
    // it sent one that looks like an OpenStack request id (oslo.middleware ignores any other)
    const given = req.headers['x-openstack-request-id'];
    logger.debug('nova simulator request', {
      method: req.method,
      path: (req.url ?? '/').split('?')[0],
      status: r.status,
      request_id: requestId,
      global_request_id: typeof given === 'string' && OPENSTACK_REQUEST_ID.test(given) ? given : null,
    });
    let payload = '';
    if (r.body !== undefined && r.status !== 204 && req.method !== 'HEAD') {
      if (typeof r.body === 'string') {
        payload = r.body;
        headers['Content-Type'] ??= 'text/plain; charset=UTF-8';
      } else {
        payload = JSON.stringify(r.body);
        headers['Content-Type'] ??= 'application/json';
      }
    }
    headers['Content-Length'] = String(Buffer.byteLength(payload));
    res.writeHead(r.status, headers);
    res.end(payload);
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    // after whatever the request does (answered, failed or refused): reads never change the state
    if (stateFile && req.method !== 'GET' && req.method !== 'HEAD') res.once('close', () => stateFile.changed());
    let rawBody: string;
    try {
      rawBody = await readBody(req);
    } catch (e) {
      send(req, res, e instanceof BodyTooLarge ? novaFault(413, 'Request is too large.') : novaFault(400, 'Could not read the request body'));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://simulator');
    const simReq: SimRequest = {
      method: (req.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      rawBody,
    };
    try {
      if (simReq.path === '/_sim' || simReq.path.startsWith('/_sim/')) {
        send(req, res, handleControl(simReq, simReq.path.slice('/_sim'.length), state));
        return;
      }
      const fault = state.faults.take(simReq.method, simReq.path);
      if (fault && fault.delayMs > 0) await delay(fault.delayMs);
      if (fault && fault.status !== null && fault.when === 'before') {
        send(req, res, faultResponse(fault, simReq.path));
        return;
      }
      const answer = dispatch(simReq);
      send(req, res, fault && fault.status !== null ? faultResponse(fault, simReq.path) : answer);
    } catch (e) {
      const errorId = randomUUID();
      logger.error('nova simulator: unexpected error', { error_id: errorId, error: e instanceof Error ? e.stack : String(e), path: simReq.path });
      send(req, res, novaFault(500, `Unexpected API Error (error id ${errorId}).`));
    }
  };

  const server = createServer((req, res) => void onRequest(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const reachable = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  const url = options.publicUrl?.replace(/\/+$/, '') ?? `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  const authUrl = `${url}/identity/v3`;
  const computeUrl = `${url}/compute/v2.1`;
  imageUrl = `${url}/image`;
  const catalog = () => {
    const entries = [
      catalogEntry('identity', 'keystone', `${authUrl}/`),
      catalogEntry('compute', 'nova', computeUrl),
      catalogEntry('image', 'glance', imageUrl),
      catalogEntry('network', 'neutron', `${url}/network`),
    ];
    if (options.clusteringUrl) entries.push(catalogEntry('clustering', 'senlin', options.clusteringUrl));
    return entries;
  };
  identityCtx = { identity: state.identity, authUrl, catalog };
  computeCtx = { state, urls: { computeUrl, bookmarkBase: `${url}/compute` }, maxVersion: opts.maxVersion };

  let closing: Promise<void> | null = null;
  return {
    url,
    authUrl,
    computeUrl,
    port,
    state,
    restoredServers,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const d of pendingDelays) clearTimeout(d.timer);
        pendingDelays.clear();
        server.close(() => {
          stateFile?.close();
          resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
