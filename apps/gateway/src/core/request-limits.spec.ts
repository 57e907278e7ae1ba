import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { MAX_BODY_BYTES } from './request-input';
import { startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

/**
 * What the HTTP layer refuses before a route runs, each in Senlin's error body: bodies over
 * MAX_BODY_BYTES (413, decoded size, chunked or not), bodies that do not decode (400, a 500 before
 * the fuzz suite found it), charsets the parser does not take (415), headers over Node's limit (431,
 * a bare status line before).
 */
describe('request limits', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  /** `size` bytes of JSON: `{"pad":"xxx…"}` */
  const jsonOf = (size: number) => Buffer.from(`{"pad":"${'x'.repeat(size - 10)}"}`);

  /** POST /v1/clusters with raw bytes (supertest would serialise a Buffer as JSON); `chunked` leaves out Content-Length. */
  const post = (body: Buffer, headers: Record<string, string> = {}, chunked = false) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL(h.gateway.url);
      const all = { 'X-Auth-Token': TOKENS.alice, 'Content-Type': 'application/json', ...headers, ...(chunked ? {} : { 'Content-Length': String(body.length) }) };
      const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/clusters', headers: all }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      // write, then end: without a Content-Length Node sends the body chunked
      req.write(body);
      req.end();
    });

  it(`reads a body of exactly ${MAX_BODY_BYTES} bytes and refuses one byte more with 413, naming the limit`, async () => {
    const within = await post(jsonOf(MAX_BODY_BYTES));
    expect(within.status).toBe(400);
    expect(within.body.error.message).toBe("Request body missing 'cluster' key.");

    const over = await post(jsonOf(MAX_BODY_BYTES + 1));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      code: 413,
      title: 'Request Entity Too Large',
      explanation: 'The body of your request was too large for this server.',
      error: {
        code: 413,
        message: `Request body size (${MAX_BODY_BYTES + 1} bytes) exceeds the maximum allowed size (${MAX_BODY_BYTES} bytes).`,
        type: 'RequestLimitExceeded',
      },
    });
  });

  it('refuses an oversized chunked body (no Content-Length) and one that only inflates beyond the limit', async () => {
    const chunked = await post(jsonOf(2 * MAX_BODY_BYTES), {}, true);
    expect(chunked.status).toBe(413);
    expect(chunked.body.error.message).toBe(`Request body exceeds the maximum allowed size (${MAX_BODY_BYTES} bytes).`);

    // 4 MiB of JSON that gzip makes a few kilobytes: the limit counts what the body decodes to
    const bomb = gzipSync(jsonOf(4 * MAX_BODY_BYTES));
    expect(bomb.length).toBeLessThan(MAX_BODY_BYTES / 100);
    const inflated = await post(bomb, { 'Content-Encoding': 'gzip' });
    expect(inflated.status).toBe(413);
    expect(inflated.body.error.type).toBe('RequestLimitExceeded');
  });

  it.each(['gzip', 'deflate', 'br'])('answers a body that is not %s as its Content-Encoding says with a 400 (a 500 before)', async (encoding) => {
    const res = await post(Buffer.from('{"cluster": {}}'), { 'Content-Encoding': encoding });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('HTTPBadRequest');
    expect(res.body.error.message).toMatch(/^Malformed request body: /);
  });

  it('answers a charset the parser does not take with 415 HTTPUnsupportedMediaType', async () => {
    const res = await post(Buffer.from('{"cluster": {}}'), { 'Content-Type': 'application/json; charset=latin1' });
    expect(res.status).toBe(415);
    expect(res.body.title).toBe('Unsupported Media Type');
    expect(res.body.error).toEqual({ code: 415, message: 'Malformed request body: unsupported charset "LATIN1"', type: 'HTTPUnsupportedMediaType' });
  });

  /** A request with headers over Node's 16 KiB, read as raw bytes: Node's parser refuses it before Express. */
  const oversizedHeaders = (method: string) =>
    new Promise<string>((resolve, reject) => {
      const url = new URL(h.gateway.url);
      const req = httpRequest({ host: url.hostname, port: url.port, method, path: '/v1/clusters', headers: { 'X-Auth-Token': 'x'.repeat(20_000) } });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(`${res.statusCode} ${res.headers['content-type']} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });

  it('answers headers over 16 KiB with 431 in Senlin’s error body (a bare status line before), and HEAD without a body', async () => {
    const get = await oversizedHeaders('GET');
    const [status, type, ...rest] = get.split(' ');
    expect([status, type]).toEqual(['431', 'application/json;']);
    const body = JSON.parse(rest.slice(1).join(' '));
    expect(body).toMatchObject({ code: 431, title: 'Request Header Fields Too Large', error: { code: 431, type: 'HTTPRequestHeaderFieldsTooLarge' } });
    expect(await oversizedHeaders('HEAD')).toMatch(/^431 application\/json; charset=utf-8 $/);
  });
});
