import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * docker-compose.yml runs replicas of the three Trellis services (README "Running replicas"); what
 * must differ between replicas has to: no fixed instance id, no host port two replicas would both
 * take. (No Docker on the CI machine: the file is read, not run.)
 */

interface ComposeService {
  deploy?: { replicas?: number };
  ports?: string[];
  environment?: Record<string, string>;
  container_name?: string;
  hostname?: string;
}

const compose = parse(readFileSync(join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const TRELLIS = ['gateway', 'policy-engine', 'nova-worker'];

/** host ports a `ports` entry publishes: "8777-8778:8777" → 2, "8777:8777" → 1 */
function hostPorts(entry: string): number {
  const host = entry.split(':').slice(-2)[0];
  const [from, to] = host.split('-').map(Number);
  return to === undefined ? 1 : to - from + 1;
}

describe('docker-compose.yml runs replicas', () => {
  it.each(TRELLIS)('%s runs more than one replica', (name) => {
    expect(compose.services[name].deploy?.replicas ?? 1).toBeGreaterThan(1);
  });

  it.each(TRELLIS)('%s sets nothing that must be unique per replica', (name) => {
    const s = compose.services[name];
    expect(s.environment?.TRELLIS_INSTANCE_ID).toBeUndefined();
    expect(s.container_name).toBeUndefined();
    expect(s.hostname).toBeUndefined();
  });

  it('publishes a host port for every gateway replica, and none for engines and workers', () => {
    const gateway = compose.services.gateway;
    expect(gateway.ports?.map(hostPorts)).toEqual([gateway.deploy!.replicas]);
    expect(compose.services['policy-engine'].ports).toBeUndefined();
    expect(compose.services['nova-worker'].ports).toBeUndefined();
  });
});
