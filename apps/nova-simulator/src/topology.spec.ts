import { readFileSync } from 'node:fs';
import { HARNESS_TOPOLOGY_FILE } from './spec-helpers';
import { DEFAULT_TOPOLOGY, loadTopology, resolveHosts, TopologyError } from './topology';

describe('loadTopology', () => {
  it('reads JSON and YAML into the same topology, with defaults resolved later', () => {
    const json = loadTopology('{"zones": [{"name": "az1", "hosts": [{"name": "h1", "capacity": {"instances": 2}}]}]}');
    const yaml = loadTopology('zones:\n  - name: az1\n    hosts:\n      - name: h1\n        capacity:\n          instances: 2\n');
    expect(yaml).toEqual(json);
    expect(resolveHosts(json)).toEqual([
      { name: 'h1', hypervisorHostname: 'h1', zone: 'az1', capacity: { instances: 2, vcpus: 1000, ram_mb: 800000, disk_gb: 600000 } },
    ]);
  });

  it('has a default of two zones with three hosts each and one DRS hypervisor', () => {
    const hosts = resolveHosts(DEFAULT_TOPOLOGY);
    expect(hosts.map((h) => `${h.zone}/${h.name}`)).toEqual(['az1/host-1', 'az1/host-2', 'az1/host-3', 'az2/host-4', 'az2/host-5', 'az2/host-6']);
    expect(hosts.filter((h) => /drs/i.test(h.hypervisorHostname)).map((h) => h.hypervisorHostname)).toEqual(['vsphere-drs-cluster-6']);
    expect(hosts.every((h) => h.capacity.instances === 100)).toBe(true);
  });

  it('ships the test/openstack harness as topologies/openstack-harness.yaml', () => {
    const hosts = resolveHosts(loadTopology(readFileSync(HARNESS_TOPOLOGY_FILE, 'utf8')));
    expect(hosts.map((h) => `${h.zone}/${h.name}/${h.hypervisorHostname}`)).toEqual([
      'az1/fake-host-1/fake-host-1',
      'az1/fake-host-2/fake-host-2',
      'az2/fake-host-3/fake-host-3',
      'az2/fake-host-4/fake-drs-cluster-4',
    ]);
  });

  it.each([
    ['not JSON or YAML', '{"zones": [', '(file)'],
    ['no zones', '{}', 'zones'],
    ['an empty zone list', '{"zones": []}', 'zones'],
    ['a zone without hosts', '{"zones": [{"name": "az1", "hosts": []}]}', 'zones[0].hosts'],
    ['a zone named internal', '{"zones": [{"name": "internal", "hosts": [{"name": "h"}]}]}', 'zones[0].name'],
    ['a duplicate zone', '{"zones": [{"name": "a", "hosts": [{"name": "h1"}]}, {"name": "a", "hosts": [{"name": "h2"}]}]}', 'zones[1].name'],
    ['a host in two zones', '{"zones": [{"name": "a", "hosts": [{"name": "h"}]}, {"name": "b", "hosts": [{"name": "h"}]}]}', 'zones[1].hosts[0].name'],
    ['a colon in a host name', '{"zones": [{"name": "a", "hosts": [{"name": "h:1"}]}]}', 'zones[0].hosts[0].name'],
    ['a negative capacity', '{"zones": [{"name": "a", "hosts": [{"name": "h", "capacity": {"vcpus": -1}}]}]}', 'zones[0].hosts[0].capacity.vcpus'],
    ['an unknown capacity key', '{"zones": [{"name": "a", "hosts": [{"name": "h", "capacity": {"gpus": 1}}]}]}', 'zones[0].hosts[0].capacity.gpus'],
    ['an unknown host key', '{"zones": [{"name": "a", "hosts": [{"name": "h", "zone": "b"}]}]}', 'zones[0].hosts[0].zone'],
    ['a duplicate hypervisor', '{"zones": [{"name": "a", "hosts": [{"name": "h1"}, {"name": "h2", "hypervisor_hostname": "h1"}]}]}', 'zones[0].hosts[1].hypervisor_hostname'],
  ])('rejects %s, naming the field', (_what, content, field) => {
    let error: unknown;
    try {
      loadTopology(content);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TopologyError);
    expect((error as TopologyError).field).toBe(field);
    expect((error as Error).message).toContain(field);
  });
});
