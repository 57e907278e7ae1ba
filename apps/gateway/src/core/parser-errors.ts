import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@trellis/common';
import { HTTP_TYPE, senlinErrorBody } from './error-body';
import { sortKeys } from './sorted-json';

/** What Node's HTTP parser refuses, by its error code; anything else is a 400. */
const REFUSALS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are larger than the server accepts (16 KiB in all).' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'The chunk extensions of the request body are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
};

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over Node's 16 KiB, a
 * malformed request line or header): Node answers those with a bare status line; here they get
 * Senlin's error body like every other error (a fuzzed 20 KB token was a 431 without one). The
 * connection is closed afterwards, as Node does: the parser cannot find the next request on it.
 */
export function answerParserErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // Node's own rule: write only when no response of this connection has started, else the peer
    // would read a corrupted answer
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
      const { status, message } = REFUSALS[error.code ?? ''] ?? { status: 400, message: 'The request could not be parsed as HTTP/1.1.' };
      const body = JSON.stringify(senlinErrorBody(status, message, status === 413 ? 'RequestLimitExceeded' : HTTP_TYPE[status]), sortKeys);
      // an answer to HEAD has no body (the client would read one as garbage); the request line is at
      // the start of the packet the parser choked on unless the headers spanned several packets
      const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
      );
      logger.debug('request refused by the HTTP parser', { status, code: error.code });
    }
    socket.destroy();
  });
}
