import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/**
 * A raw HTTP client for the fuzzer: any method with any body (a GET with one too), paths and header
 * values sent as given, chunked or with a Content-Length, and a time limit after which the request
 * counts as a hang.
 */
export interface WireRequest {
  method: string;
  /** path and query, already encoded as they go on the request line */
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Transfer-Encoding: chunked instead of Content-Length */
  chunked?: boolean;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class NoAnswer extends Error {}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function send(baseUrl: string, req: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== null && !req.chunked) headers['Content-Length'] = String(req.body.length);
    if (req.chunked) headers['Transfer-Encoding'] = 'chunked';
    let settled = false;
    const finish = (error: Error | null, res?: WireResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(res!);
    };
    const r = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, setHost: true },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (e) => finish(new NoAnswer(`the response broke off: ${e.message}`)));
      },
    );
    const timer = setTimeout(() => {
      r.destroy();
      finish(new NoAnswer(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    r.on('error', (e) => finish(new NoAnswer(`the request failed: ${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`)));
    if (req.body !== null) r.end(req.body);
    else r.end();
  });
}

export function closeWire(): void {
  agent.destroy();
}
