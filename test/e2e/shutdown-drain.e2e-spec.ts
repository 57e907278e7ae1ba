import { createLogger } from '@trellis/common';
import { startTestTrellis } from '../support/trellis';

/**
 * TRELLIS_SHUTDOWN_DRAIN_SECONDS (README "Upgrading a running deployment"): a gateway told to stop
 * first says so on /readyz (503 "shutting down") while it still answers everything else, so a load
 * balancer that polls /readyz takes it out of rotation before it closes; then it closes.
 */
describe('a gateway that is stopping drains first', () => {
  it('answers /readyz 503 "shutting down" and still serves for the drain, then closes', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('trellis', 'info', {}, (line) => lines.push(JSON.parse(line)));
    const t = await startTestTrellis({ env: { TRELLIS_SHUTDOWN_DRAIN_SECONDS: '2' }, logger });
    const url = t.trellis.url;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const started = Date.now();
    const closing = t.close();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(await ready.json()).toMatchObject({ status: 'not ready', reason: 'shutting down' });
    // everything else is still served while it drains
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/`)).status).toBe(300);
    expect(lines).toContainEqual(expect.objectContaining({ service: 'gateway', msg: 'draining: /readyz answers 503 until the gateway closes', seconds: 2 }));

    await closing;
    // the drain's wait, not a speed: a timer may fire a millisecond early
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);

  it('does not wait by default', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const t = await startTestTrellis({ logger: createLogger('trellis', 'info', {}, (line) => lines.push(JSON.parse(line))) });
    const url = t.trellis.url;
    await t.close();
    expect(lines.filter((l) => String(l.msg).startsWith('draining'))).toEqual([]);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
