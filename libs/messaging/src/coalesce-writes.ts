import type { Writable } from 'node:stream';

/** What amqplib (2.x) keeps of a connection: its socket and the muxer that writes every channel's frames to it. */
interface AmqplibInternals {
  connection?: {
    stream?: Writable;
    muxer?: { _readIncoming?: (...args: unknown[]) => unknown };
  };
}

/**
 * amqplib's muxer writes each frame to the socket with a write of its own, one system call each:
 * an RPC request's reply and its ack are two, and a storm of replies answered in the same turn of
 * the event loop is two per request (BENCHMARKS.md, burst: about a quarter of the gateway's socket
 * writes). Corking the socket while the muxer writes a round sends the round in one `writev`.
 * Nothing else changes: the same frames in the same order, and the muxer still stops at the
 * socket's high-water mark and waits for 'drain'.
 *
 * Reaches into amqplib's internals; returns false, leaving the connection as it is, when they are
 * not there (coalesce-writes.spec.ts fails then, so an upgrade that moves them is noticed).
 */
export function coalesceWrites(model: unknown): boolean {
  const connection = (model as AmqplibInternals).connection;
  const stream = connection?.stream;
  const muxer = connection?.muxer;
  const round = muxer?._readIncoming;
  if (!stream || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function' || typeof round !== 'function') return false;
  muxer!._readIncoming = function corked(this: unknown, ...args: unknown[]) {
    stream.cork();
    try {
      return round.apply(this, args);
    } finally {
      stream.uncork();
    }
  };
  return true;
}
