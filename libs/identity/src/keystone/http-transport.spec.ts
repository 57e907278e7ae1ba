import { createServer } from 'node:net';
import { withLogContext } from '@trellis/common/log-context';
import { openstackRequestDuration, openstackRequests } from '@trellis/observability/metrics';
import { metricValue } from '@trellis/observability/testing';
import { DEFAULT_RETRY, HttpTransport, backoffDelay, defaultRuntime, parseRetryAfter, type Runtime } from './http-transport';
import { NovaError, NovaForbiddenError } from './openstack.errors';
import { FakeOpenStack, recordingSleep } from '@trellis/nova/testing/fake-openstack';

describe('HttpTransport', () => {
  let fake: FakeOpenStack;
  let delays: number[];
  let runtime: Runtime;
  const now = Date.parse('2030-01-01T00:00:00Z');

  beforeEach(async () => {
    fake = await FakeOpenStack.start();
    const sleep = recordingSleep();
    delays = sleep.delays;
    runtime = { ...defaultRuntime(), sleep: sleep.sleep, random: () => 0.5, now: () => now };
  });
  afterEach(() => fake.close());

  const transport = (timeoutMs = 5000) => new HttpTransport(runtime, DEFAULT_RETRY, timeoutMs);
  const get = (path: string) => ({ service: 'compute' as const, operation: 'test.get', method: 'GET' as const, url: `${fake.url}${path}`, idempotent: true });

  it('retries a 5xx with full-jitter backoff, a bounded number of times, then reports it', async () => {
    fake.sequence('GET', '/x', [{ status: 503, body: { computeFault: { code: 503, message: 'busy' } } }]);
    const error = await transport().send(get('/x')).catch((e) => e);
    expect(error).toBeInstanceOf(NovaError);
    expect(error.message).toBe('Nova GET /x answered 503: busy');
    expect(error.transient).toBe(true);
    expect(fake.to('GET', '/x')).toHaveLength(4);
    // random 0.5 of min(5000, 250 * 2^n)
    expect(delays).toEqual([125, 250, 500]);
  });

  it('returns the answer once a retried 5xx succeeds', async () => {
    fake.sequence('GET', '/x', [{ status: 500 }, { status: 502 }, { status: 200, body: { ok: true } }]);
    const res = await transport().send(get('/x'));
    expect(res.body).toEqual({ ok: true });
    expect(fake.to('GET', '/x')).toHaveLength(3);
  });

  it('does not repeat a create after a 5xx: the error is marked ambiguous', async () => {
    fake.sequence('POST', '/servers', [{ status: 500, body: { computeFault: { message: 'boom' } } }]);
    const error = await transport()
      .send({ service: 'compute', operation: 'test.call', method: 'POST', url: `${fake.url}/servers`, body: {}, idempotent: false })
      .catch((e) => e);
    expect(error.ambiguous).toBe(true);
    expect(fake.to('POST', '/servers')).toHaveLength(1);
  });

  it('honours Retry-After in seconds on 429', async () => {
    fake.sequence('GET', '/x', [{ status: 429, headers: { 'Retry-After': '3' }, body: { overLimit: { message: 'slow down' } } }, { status: 200 }]);
    await transport().send(get('/x'));
    expect(delays).toEqual([3000]);
  });

  it('honours Retry-After as an HTTP date on 413, even for a create', async () => {
    const at = new Date(now + 7000).toUTCString();
    fake.sequence('POST', '/x', [{ status: 413, headers: { 'Retry-After': at } }, { status: 202, body: {} }]);
    await transport().send({ service: 'compute', operation: 'test.call', method: 'POST', url: `${fake.url}/x`, body: {}, idempotent: false });
    expect(delays).toEqual([7000]);
    expect(fake.to('POST', '/x')).toHaveLength(2);
  });

  it('does not wait for a Retry-After beyond its limit', async () => {
    fake.sequence('GET', '/x', [{ status: 429, headers: { 'Retry-After': '3600' }, body: { overLimit: { message: 'quota' } } }]);
    await expect(transport().send(get('/x'))).rejects.toThrow('asked to retry after 3600 s, more than the 60 s this client waits');
    expect(delays).toEqual([]);
  });

  it('retries 409 when asked to, a bounded number of times, then reports the conflict', async () => {
    fake.sequence('DELETE', '/servers/a', [
      { status: 409, body: { conflictingRequest: { code: 409, message: "Cannot 'delete' instance a while it is in task_state spawning" } } },
    ]);
    const error = await transport()
      .send({ service: 'compute', operation: 'test.call', method: 'DELETE', url: `${fake.url}/servers/a`, idempotent: true, retryConflicts: true })
      .catch((e) => e);
    expect(error.status).toBe(409);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('while it is in task_state spawning');
    expect(fake.to('DELETE', '/servers/a')).toHaveLength(DEFAULT_RETRY.conflictAttempts);
  });

  it('succeeds when the conflict clears', async () => {
    fake.sequence('DELETE', '/servers/a', [{ status: 409 }, { status: 204 }]);
    const res = await transport().send({ service: 'compute', operation: 'test.call', method: 'DELETE', url: `${fake.url}/servers/a`, idempotent: true, retryConflicts: true });
    expect(res.status).toBe(204);
  });

  it('does not retry other 4xx, and parses Nova’s message', async () => {
    fake.sequence('GET', '/x', [{ status: 400, body: { badRequest: { code: 400, message: 'Invalid input for field/attribute name.' } } }]);
    const error = await transport().send(get('/x')).catch((e) => e);
    expect(error.message).toBe('Nova GET /x answered 400: Invalid input for field/attribute name.');
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.transient).toBe(false);
    expect(fake.to('GET', '/x')).toHaveLength(1);
  });

  it('types a 403 as NovaForbiddenError', async () => {
    fake.sequence('GET', '/x', [{ status: 403, body: { forbidden: { message: 'Policy does not allow it.' } } }]);
    await expect(transport().send(get('/x'))).rejects.toBeInstanceOf(NovaForbiddenError);
  });

  it('times out an attempt that gets no answer, and retries it', async () => {
    fake.sequence('GET', '/slow', ['hang', 'hang', { status: 200, body: { late: true } }]);
    const res = await transport(100).send(get('/slow'));
    expect(res.body).toEqual({ late: true });
    expect(fake.to('GET', '/slow')).toHaveLength(3);
  });

  it('reports a request that never gets an answer', async () => {
    fake.sequence('GET', '/slow', ['hang']);
    const error = await new HttpTransport(runtime, { ...DEFAULT_RETRY, attempts: 2 }, 50).send(get('/slow')).catch((e) => e);
    expect(error.message).toBe('Nova GET /slow failed: no answer within 50 ms');
    expect(error.status).toBeNull();
    expect(error.transient).toBe(true);
  });

  it('retries a refused connection, even for a create', async () => {
    const port = await closedPort();
    const error = await transport()
      .send({ service: 'compute', operation: 'test.call', method: 'POST', url: `http://127.0.0.1:${port}/servers`, body: {}, idempotent: false })
      .catch((e) => e);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.ambiguous).toBe(false);
    expect(delays).toHaveLength(DEFAULT_RETRY.attempts - 1);
  });

  it("sends the request id of the work it runs for as OpenStack's global request id, and nothing else", async () => {
    const id = 'req-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11';
    fake.sequence('GET', '/x', [{ status: 200, body: {} }]);
    await withLogContext({ correlation_id: id }, () => transport().send(get('/x')));
    await withLogContext({ correlation_id: 'resume-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11' }, () => transport().send(get('/x')));
    await transport().send(get('/x'));
    expect(fake.to('GET', '/x').map((r) => r.headers['x-openstack-request-id'])).toEqual([id, undefined, undefined]);
  });

  it('counts every try by service, operation and status class, and times it', async () => {
    const labels = { service: 'compute', operation: 'servers.get' };
    const before = {
      ok: await metricValue(openstackRequests, { ...labels, status_class: '2xx' }),
      failed: await metricValue(openstackRequests, { ...labels, status_class: '5xx' }),
      refused: await metricValue(openstackRequests, { ...labels, status_class: 'error' }),
      timed: await metricValue(openstackRequestDuration, labels),
    };
    fake.sequence('GET', '/s', [{ status: 503 }, { status: 200, body: {} }]);
    await transport().send({ ...get('/s'), operation: 'servers.get' });
    const refused = new HttpTransport(runtime, { ...DEFAULT_RETRY, attempts: 1 }, 1000);
    await refused.send({ ...get('/s'), operation: 'servers.get', url: `http://127.0.0.1:${await closedPort()}/s` }).catch(() => undefined);
    expect(await metricValue(openstackRequests, { ...labels, status_class: '2xx' })).toBe(before.ok + 1);
    expect(await metricValue(openstackRequests, { ...labels, status_class: '5xx' })).toBe(before.failed + 1);
    expect(await metricValue(openstackRequests, { ...labels, status_class: 'error' })).toBe(before.refused + 1);
    expect(await metricValue(openstackRequestDuration, labels)).toBe(before.timed + 3);
  });

  it('reads a Keystone error body and a plain-text one', async () => {
    fake.sequence('GET', '/k', [{ status: 404, body: { error: { code: 404, message: 'Could not find token.', title: 'Not Found' } } }]);
    fake.sequence('GET', '/t', [{ status: 404, body: '<html><body>404 Not Found</body></html>' }]);
    await expect(transport().send({ ...get('/k'), service: 'identity' })).rejects.toThrow('Keystone GET /k answered 404: Could not find token.');
    await expect(transport().send(get('/t'))).rejects.toThrow('Nova GET /t answered 404: 404 Not Found');
  });
});

describe('backoff and Retry-After', () => {
  it('caps the backoff ceiling', () => {
    expect(backoffDelay(10, DEFAULT_RETRY, () => 0.999)).toBe(4995);
    expect(backoffDelay(0, DEFAULT_RETRY, () => 0)).toBe(0);
  });

  it('parses seconds and dates, and ignores garbage', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('10', now)).toBe(10_000);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
