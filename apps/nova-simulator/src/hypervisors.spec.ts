import { call, login, sample, shapeOf } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

describe('hypervisors and availability zones', () => {
  let sim: RunningSimulator;
  let admin: string;
  let demo: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    admin = await login(sim, 'admin');
    demo = await login(sim, 'demo');
  });
  afterAll(() => sim.close());

  it.each(['2.1', '2.64', '2.88'])('matches the real os-hypervisors/detail capture at %s', async (version) => {
    const r = await call(sim, 'GET', '/compute/v2.1/os-hypervisors/detail', { token: admin, version });
    expect(r.status).toBe(200);
    const expected = sample(`os-hypervisors-detail.${version}.json`).hypervisors[0];
    expect(r.body.hypervisors).toHaveLength(6);
    for (const h of r.body.hypervisors) {
      expect(shapeOf(h).sort()).toEqual(shapeOf(expected).sort());
      expect(typeof h.id).toBe(typeof expected.id);
      expect(typeof h.service.id).toBe(typeof expected.service.id);
    }
    const drs = r.body.hypervisors.find((h: { hypervisor_hostname: string }) => h.hypervisor_hostname.includes('drs'));
    expect(drs.service.host).toBe('host-6');
  });

  it('counts what runs on each hypervisor (before 2.88)', async () => {
    await call(sim, 'POST', '/compute/v2.1/servers', {
      token: admin,
      version: '2.64',
      body: { server: { name: 'x', imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25', flavorRef: '3', networks: 'none', availability_zone: 'az1:host-2' } },
    });
    const r = await call(sim, 'GET', '/compute/v2.1/os-hypervisors/detail', { token: admin, version: '2.64' });
    const h2 = r.body.hypervisors.find((h: { service: { host: string } }) => h.service.host === 'host-2');
    expect(h2).toMatchObject({ running_vms: 1, vcpus_used: 2, memory_mb_used: 4096, local_gb_used: 40 });
    const one = await call(sim, 'GET', `/compute/v2.1/os-hypervisors/${h2.id}`, { token: admin, version: '2.64' });
    expect(one.body.hypervisor.hypervisor_hostname).toBe('host-2');
  });

  it('lists hypervisors for admins only', async () => {
    const list = await call(sim, 'GET', '/compute/v2.1/os-hypervisors', { token: admin });
    expect(Object.keys(list.body.hypervisors[0]).sort()).toEqual(['hypervisor_hostname', 'id', 'state', 'status']);
    const denied = await call(sim, 'GET', '/compute/v2.1/os-hypervisors/detail', { token: demo });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-hypervisors:list-detail to be performed." },
    });
    expect((await call(sim, 'GET', '/compute/v2.1/os-hypervisors', { token: demo })).status).toBe(403);
  });

  it('lists zones for everyone (hosts null, no internal) and details for admins', async () => {
    const plain = await call(sim, 'GET', '/compute/v2.1/os-availability-zone', { token: demo });
    expect(plain.body.availabilityZoneInfo).toEqual([
      { zoneName: 'az1', zoneState: { available: true }, hosts: null },
      { zoneName: 'az2', zoneState: { available: true }, hosts: null },
    ]);
    const detail = await call(sim, 'GET', '/compute/v2.1/os-availability-zone/detail', { token: admin });
    const real = sample('os-availability-zone-detail.json').availabilityZoneInfo;
    expect(shapeOf(detail.body.availabilityZoneInfo[0].hosts['host-1'])).toEqual(shapeOf(real[0].hosts['fake-host-1']));
    expect(detail.body.availabilityZoneInfo.map((z: { zoneName: string }) => z.zoneName)).toEqual(['az1', 'az2', 'internal']);
    expect(Object.keys(detail.body.availabilityZoneInfo[1].hosts)).toEqual(['host-4', 'host-5', 'host-6']);
    expect(shapeOf(detail.body.availabilityZoneInfo[2]).sort()).toEqual(shapeOf(real[2]).sort());
    expect(Object.keys(detail.body.availabilityZoneInfo[2].hosts['os-controller']).sort()).toEqual(['nova-conductor', 'nova-scheduler']);
    expect((await call(sim, 'GET', '/compute/v2.1/os-availability-zone/detail', { token: demo })).status).toBe(403);
  });
});
