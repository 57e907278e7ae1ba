import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenStackSettings } from '@trellis/common';

/**
 * A scriptable HTTP server on port 0 for the nova lib's unit tests: each test says what Keystone
 * and Nova answer and then reads back what the client sent. Not a simulator: it answers only the
 * routes a test registers.
 */

export interface RecordedRequest {
  method: string;
  /** path and query */
  path: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** 'hang' never answers (for timeouts) */
export type FakeHandler = (req: RecordedRequest) => FakeResponse | 'hang' | Promise<FakeResponse | 'hang'>;

interface Route {
  method: string;
  path: string | RegExp;
  handler: FakeHandler;
}

export function sample(name: string): any {
  return JSON.parse(readFileSync(join(__dirname, 'nova-samples', name), 'utf8'));
}

export class FakeOpenStack {
  readonly requests: RecordedRequest[] = [];
  private routes: Route[] = [];
  private tokenCounter = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeOpenStack> {
    let fake: FakeOpenStack | null = null;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://fake');
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          path: `${url.pathname}${url.search}`,
          pathname: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: text ? JSON.parse(text) : null,
        };
        void (fake as FakeOpenStack).answer(recorded).then((answer) => {
          if (answer === 'hang') return;
          const body = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
          const type = typeof answer.body === 'string' ? 'text/plain' : 'application/json';
          res.writeHead(answer.status, { 'Content-Type': type, ...answer.headers });
          res.end(body);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeOpenStack(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  get authUrl(): string {
    return `${this.url}/identity/v3`;
  }

  get computeUrl(): string {
    return `${this.url}/compute/v2.1`;
  }

  /** the latest registration for a method and path wins, so a test can override a default */
  on(method: string, path: string | RegExp, handler: FakeHandler): this {
    this.routes.unshift({ method, path, handler });
    return this;
  }

  /** answer each call with the next response; the last one repeats */
  sequence(method: string, path: string | RegExp, responses: Array<FakeResponse | 'hang'>): this {
    let i = 0;
    return this.on(method, path, () => responses[Math.min(i++, responses.length - 1)]);
  }

  /** Keystone that issues a fresh token per POST, valid for lifetimeMs of the given clock. */
  withKeystone(options: { lifetimeMs?: number; now?: () => number; catalog?: unknown[]; roles?: string[] } = {}): this {
    return this.on('POST', '/identity/v3/auth/tokens', () => {
      const value = `token-${++this.tokenCounter}`;
      const now = options.now ? options.now() : Date.now();
      const body = sample('keystone-auth-tokens.trimmed.json');
      body.expires_at = new Date(now + (options.lifetimeMs ?? 3_600_000)).toISOString();
      body.catalog = options.catalog ?? this.catalog();
      if (options.roles) body.roles = options.roles.map((name, i) => ({ id: `role-${i}`, name }));
      return { status: 201, body: { token: body }, headers: { 'X-Subject-Token': value } };
    });
  }

  catalog(extra: unknown[] = []): unknown[] {
    return [
      { type: 'identity', name: 'keystone', endpoints: [{ interface: 'public', region: 'RegionOne', url: `${this.authUrl}/` }] },
      {
        type: 'compute',
        name: 'nova',
        endpoints: [
          { interface: 'public', region: 'RegionOne', url: this.computeUrl },
          { interface: 'internal', region: 'RegionOne', url: `${this.url}/internal-compute/v2.1` },
          { interface: 'public', region: 'RegionTwo', url: `${this.url}/region-two-compute/v2.1` },
        ],
      },
      ...extra,
    ];
  }

  /** the v2.1 version document of a Nova offering microversions up to max */
  withNovaVersion(max: string, min = '2.1'): this {
    return this.on('GET', '/compute/v2.1', () => ({
      status: 200,
      body: { version: { id: 'v2.1', status: 'CURRENT', version: max, min_version: min, links: [{ rel: 'self', href: `${this.computeUrl}/` }] } },
    }));
  }

  /** the latest token this Keystone issued */
  get lastToken(): string {
    return `token-${this.tokenCounter}`;
  }

  to(method: string, pathname: string | RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && (typeof pathname === 'string' ? r.pathname === pathname : pathname.test(r.pathname)));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: RecordedRequest): Promise<FakeResponse | 'hang'> {
    this.requests.push(req);
    const route = this.routes.find((r) => r.method === req.method && (typeof r.path === 'string' ? r.path === req.pathname : r.path.test(req.pathname)));
    if (!route) return { status: 404, body: { itemNotFound: { code: 404, message: `fake: no route for ${req.method} ${req.pathname}` } } };
    return route.handler(req);
  }
}

/** OpenStackSettings with everything unset but the overrides. */
export function openStackSettings(overrides: Partial<OpenStackSettings> = {}): OpenStackSettings {
  return {
    cloud: null,
    cloudsFile: null,
    authUrl: null,
    authType: null,
    username: null,
    userId: null,
    password: null,
    userDomainName: null,
    userDomainId: null,
    projectName: null,
    projectId: null,
    projectDomainName: null,
    projectDomainId: null,
    regionName: null,
    interface: 'public',
    applicationCredentialId: null,
    applicationCredentialName: null,
    applicationCredentialSecret: null,
    computeEndpoint: null,
    computeApiVersion: null,
    ...overrides,
  };
}

/** admin/admin in project admin, domain Default, against this fake */
export function adminSettings(fake: FakeOpenStack, overrides: Partial<OpenStackSettings> = {}): OpenStackSettings {
  return openStackSettings({
    authUrl: fake.authUrl,
    username: 'admin',
    password: 'admin',
    userDomainName: 'Default',
    projectName: 'admin',
    projectDomainName: 'Default',
    regionName: 'RegionOne',
    ...overrides,
  });
}

/** a sleep that returns at once and records what it was asked to wait */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}
