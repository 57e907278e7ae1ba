import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './scratch';

/** the kernel's ephemeral range as this machine has it (Linux), or null */
function ephemeralRange(): [number, number] | null {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return [low, high];
  } catch {
    return null;
  }
}

const listen = (port: number) =>
  new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });

describe('freePort', () => {
  it('gives a port a server can bind, outside the ephemeral range the kernel hands outgoing connections', async () => {
    const range = ephemeralRange();
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      if (range && range[0] - 20_000 >= 1_000) {
        expect(port).toBeGreaterThanOrEqual(20_000);
        expect(port).toBeLessThan(range[0]);
      }
      const srv = await listen(port);
      await new Promise((r) => srv.close(r));
    }
  });

  it('passes over a port a server is listening on', async () => {
    const range = ephemeralRange();
    if (!range || range[0] - 20_000 < 1_000) return; // the kernel's choice there: nothing of ours to check
    const held = await listen(await freePort());
    const port = (held.address() as { port: number }).port;
    // the first draw lands on the held port, the next ones elsewhere
    const draws = [(port - 20_000 + 0.5) / (range[0] - 20_000), 0.01, 0.02];
    const random = jest.spyOn(Math, 'random').mockImplementation(() => draws.shift() ?? 0.03);
    try {
      const got = await freePort();
      expect(random.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(got).not.toBe(port);
      expect(got).toBeGreaterThanOrEqual(20_000);
    } finally {
      random.mockRestore();
      await new Promise((r) => held.close(r));
    }
  });
});
