import { dirname, join } from 'node:path';
import { Duplex, PassThrough } from 'node:stream';
import { coalesceWrites } from './coalesce-writes';

// amqplib's own Connection (what a ChannelModel holds as `connection`), built on a socket stand-in:
// it makes the muxer that every channel's frames go through
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Connection } = require(join(dirname(require.resolve('amqplib')), 'lib/connection.js')) as {
  Connection: new (socket: Duplex) => { stream: Duplex; muxer: { pipeFrom(r: PassThrough): void; _readIncoming: unknown } };
};

/** A socket stand-in that records each system call's worth of data: one entry per write or writev. */
function recordingSocket() {
  const calls: string[][] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      calls.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      calls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      done();
    },
  });
  return { socket, calls };
}

async function sendTwoFrames(coalesce: boolean) {
  const { socket, calls } = recordingSocket();
  const connection = new Connection(socket);
  expect(connection.stream).toBe(socket);
  if (coalesce) expect(coalesceWrites({ connection })).toBe(true);
  const muxer = connection.muxer;
  const reply = new PassThrough({ objectMode: true });
  const acks = new PassThrough({ objectMode: true });
  muxer.pipeFrom(reply);
  muxer.pipeFrom(acks);
  // an RPC request answered: its reply on one channel, its ack on another, in the same turn
  reply.write(Buffer.from('reply'));
  acks.write(Buffer.from('ack'));
  await new Promise((r) => setTimeout(r, 20));
  return calls;
}

describe('coalesceWrites', () => {
  it("sends the frames amqplib's muxer writes in one round as one writev", async () => {
    expect(await sendTwoFrames(true)).toEqual([['reply', 'ack']]);
  });

  it('is needed: without it the same round is one write per frame', async () => {
    expect(await sendTwoFrames(false)).toEqual([['reply'], ['ack']]);
  });

  it('leaves alone what does not look like an amqplib connection', () => {
    expect(coalesceWrites({})).toBe(false);
    expect(coalesceWrites({ connection: { stream: new PassThrough() } })).toBe(false);
  });
});
