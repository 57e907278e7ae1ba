/**
 * The clustering API as the CLI's commands that act as a user call it (`example`, `watch`): the
 * token and microversion on every request, JSON both ways, each call logged.
 */
/** the longest a 429's Retry-After is waited for before one more try */
const MAX_RETRY_AFTER_SECONDS = 10;

export class TrellisApi {
  constructor(
    private readonly target: {
      apiUrl: string;
      token: string;
      /** shows an action while it runs (`--watch`); `finished` waits for it before it reads the result */
      follow?: (actionId: string) => Promise<unknown>;
    },
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; location: string | null }> {
    const send = () =>
      fetch(`${this.target.apiUrl}/v1${path}`, {
        method,
        headers: { 'X-Auth-Token': this.target.token, 'Content-Type': 'application/json', 'OpenStack-API-Version': 'clustering 1.14' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res = await send();
    // the project's request rate is spent (other clients of the project): wait as the 429 asks, once
    const wait = Number(res.headers.get('retry-after'));
    if (res.status === 429 && wait > 0 && wait <= MAX_RETRY_AFTER_SECONDS) {
      this.log(`${method} /v1${path} → 429, again in ${wait} s`);
      await new Promise((r) => setTimeout(r, wait * 1000));
      res = await send();
    }
    const text = await res.text();
    this.log(`${method} /v1${path} → ${res.status}`);
    return { status: res.status, body: text ? JSON.parse(text) : null, location: res.headers.get('location') };
  }

  async expect(status: number, method: string, path: string, body?: unknown): Promise<any> {
    const res = await this.call(method, path, body);
    if (res.status !== status) throw new Error(`${method} /v1${path}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  }

  /** waits for the action the 202 answer points at; its final view */
  async finished(location: string | null, timeoutMs: number): Promise<any> {
    const id = location?.split('/').pop();
    if (!id) throw new Error('the 202 answer has no Location header');
    if (this.target.follow) await this.target.follow(id);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.call('GET', `/actions/${id}`);
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(body.action.status)) return body.action;
      if (Date.now() > deadline) throw new Error(`action ${id} still ${body.action.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async act(cluster: string, body: Record<string, unknown>, timeoutMs: number): Promise<void> {
    const res = await this.expect(202, 'POST', `/clusters/${cluster}/actions`, body);
    const action = await this.finished(res.location, timeoutMs);
    if (action.status !== 'SUCCEEDED') throw new Error(`${Object.keys(body)[0]}: ${action.status}: ${action.status_reason}`);
  }
}
