import { createHash } from 'node:crypto';

/**
 * A host as a project member sees it in Trellis (and in Nova): nova.utils.generate_hostid, sha224 of
 * the object's project id followed by the host name. Only admins see host names.
 */
export function memberHostId(projectId: string, host: string): string {
  return createHash('sha224').update(projectId + host).digest('hex');
}

/**
 * A small client for tests that talk to Trellis as a user would: Keystone token from the
 * simulator (or a real Keystone), then the clustering API with X-Auth-Token.
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function keystoneToken(
  authUrl: string,
  user: { name: string; password: string; project: string },
): Promise<string> {
  const res = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: user.name, domain: { name: 'Default' }, password: user.password } },
        },
        scope: { project: { name: user.project, domain: { name: 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`Keystone refused ${user.name}: ${res.status} ${await res.text()}`);
  return res.headers.get('x-subject-token')!;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
    private readonly microversion = '1.14',
  ) {}

  /** `init.timeoutMs` aborts a request that has not answered by then (fetch then throws a TimeoutError). */
  async call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    init: { headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<ApiResponse<T>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        'X-Auth-Token': this.token,
        'OpenStack-API-Version': `clustering ${this.microversion}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...init.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: init.timeoutMs === undefined ? undefined : AbortSignal.timeout(init.timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text for the assertion message */
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get = <T = any>(path: string) => this.call<T>('GET', path);
  post = <T = any>(path: string, body: unknown) => this.call<T>('POST', path, body);

  /** Poll an action until it is SUCCEEDED, FAILED or CANCELLED (or the time runs out). */
  async waitForAction(actionId: string, timeoutMs = 60_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    let last: Record<string, any> | null = null;
    while (Date.now() < deadline) {
      const res = await this.get(`/v1/actions/${actionId}`);
      if (res.status !== 200) throw new Error(`GET action ${actionId}: ${res.status} ${JSON.stringify(res.body)}`);
      last = res.body.action;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(last!.status)) return last!;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`action ${actionId} did not finish within ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
  }

  /** the action id from a 202's Location header, as python-senlinclient reads it */
  static actionIdOf(res: ApiResponse): string {
    const location = res.headers.get('location');
    if (!location) throw new Error(`no Location header in ${res.status} ${JSON.stringify(res.body)}`);
    return location.split('/actions/')[1];
  }
}
