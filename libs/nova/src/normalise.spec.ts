import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as shape from './normalise';
import { sample } from './testing/fake-openstack';

describe('normalising the captured Nova samples', () => {
  it('covers every sample file', () => {
    // keystone-auth-tokens is read by keystone-session.spec and keystone-trusts/ (Keystone's OS-TRUST
    // answers) by the simulator's trust spec and trusts.spec; the rest are normalised here
    expect(readdirSync(join(__dirname, 'testing/nova-samples')).sort()).toEqual([
      'keystone-auth-tokens.trimmed.json',
      'keystone-trusts',
      'os-availability-zone-detail.json',
      'os-hypervisors-detail.2.1.json',
      'os-hypervisors-detail.2.64.json',
      'os-hypervisors-detail.2.88.json',
      'os-server-groups.2.1.json',
      'os-server-groups.2.64.json',
      'server-show-error-novalidhost.2.64.json',
      'server-show.2.64.json',
      'servers-detail.2.64.json',
    ]);
  });

  it('reads server groups below 2.64 (policies list) and from 2.64 (policy + rules) the same way', () => {
    const old = sample('os-server-groups.2.1.json').server_groups.map((g: unknown) => shape.serverGroup(g));
    const current = sample('os-server-groups.2.64.json').server_groups.map((g: unknown) => shape.serverGroup(g));
    expect(old.map((g: { policy: string }) => g.policy)).toEqual(['anti-affinity', 'affinity', 'anti-affinity']);
    expect(current[0]).toEqual({
      id: 'f7454620-fab1-44a9-b980-1fdffce76bc1',
      name: 'smoke-anti',
      policy: 'anti-affinity',
      rules: {},
      members: [
        'c559e755-f0d6-4ff0-bdfd-b753b28f027c',
        'ccba118d-f2ce-4363-afb6-5f324c58cfcb',
        'c88e0df9-fe5d-48f2-8f2f-5c3d54e30577',
        'df945199-ca78-450d-a7f9-b1726dcf664a',
        '49366922-838f-4f25-9e27-7027fdcd3ead',
      ],
    });
    expect(current[2].rules).toEqual({ max_server_per_host: 1 });
    expect(old.map((g: { rules: unknown }) => g.rules)).toEqual([{}, {}, {}]);
    expect(old.map((g: { members: string[] }) => g.members)).toEqual(current.map((g: { members: string[] }) => g.members));
  });

  it('reads an ACTIVE server with its zone, host and hypervisor', () => {
    expect(shape.server(sample('server-show.2.64.json').server)).toEqual({
      id: '1ec49c24-da5c-4009-8a7c-2e048ee0f3e6',
      name: 'smoke-raw-1',
      status: 'ACTIVE',
      availabilityZone: 'az1',
      host: 'fake-host-1',
      hypervisorHostname: 'fake-host-1',
      hostId: '6ee0de528a264e6083efc61321eb0f7e13105a3bcccbce57da54c312',
      metadata: {},
      fault: null,
      imageId: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
      flavor: { id: null, name: 'm1.tiny' },
      updated: '2026-11-21T23:20:45Z',
    });
  });

  it('reads a NoValidHost server: no zone, no host, the fault message', () => {
    expect(shape.server(sample('server-show-error-novalidhost.2.64.json').server)).toEqual({
      id: '49366922-838f-4f25-9e27-7027fdcd3ead',
      name: 'smoke-anti-5',
      status: 'ERROR',
      availabilityZone: null,
      host: null,
      hypervisorHostname: null,
      hostId: null,
      metadata: {},
      fault: { code: 500, message: 'No valid host was found. There are not enough hosts available.' },
      imageId: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
      flavor: { id: null, name: 'm1.tiny' },
      updated: '2026-11-21T23:20:31Z',
    });
  });

  it('reads the server list, including the DRS hypervisor name', () => {
    const servers = sample('servers-detail.2.64.json').servers.map((s: unknown) => shape.server(s));
    expect(servers.map((s: { status: string; availabilityZone: string | null; host: string | null }) => [s.status, s.availabilityZone, s.host])).toEqual([
      ['ERROR', null, null],
      ['ACTIVE', 'az1', 'fake-host-2'],
      ['ACTIVE', 'az2', 'fake-host-3'],
      ['ACTIVE', 'az2', 'fake-host-4'],
      ['ACTIVE', 'az1', 'fake-host-1'],
    ]);
    expect(servers[3].hypervisorHostname).toBe('fake-drs-cluster-4');
  });

  it('reads a member view without the admin-only host fields', () => {
    const member = { ...sample('server-show.2.64.json').server };
    for (const key of Object.keys(member)) if (key.startsWith('OS-EXT-SRV-ATTR:')) delete member[key];
    const s = shape.server(member);
    expect([s.host, s.hypervisorHostname, s.hostId]).toEqual([null, null, '6ee0de528a264e6083efc61321eb0f7e13105a3bcccbce57da54c312']);
  });

  it('reads the zone detail view: compute hosts only, no internal zone', () => {
    expect(shape.availabilityZones(sample('os-availability-zone-detail.json'))).toEqual([
      { name: 'az1', available: true, hosts: ['fake-host-1', 'fake-host-2'] },
      { name: 'az2', available: true, hosts: ['fake-host-3', 'fake-host-4'] },
    ]);
  });

  it.each(['2.1', '2.64', '2.88'])('reads hypervisors at %s with string ids and the service host', (mv) => {
    const hypervisors = sample(`os-hypervisors-detail.${mv}.json`).hypervisors.map((h: unknown) => shape.hypervisor(h));
    expect(hypervisors.every((h: { id: unknown }) => typeof h.id === 'string' && h.id !== '')).toBe(true);
    expect(hypervisors[3]).toMatchObject({ hypervisorHostname: 'fake-drs-cluster-4', serviceHost: 'fake-host-4', state: 'up', status: 'enabled' });
    if (mv === '2.1') expect(hypervisors.map((h: { id: string }) => h.id)).toEqual(['1', '2', '3', '4']);
  });

  it('names the field of a body it cannot use', () => {
    expect(() => shape.serverGroup({ id: 'g', name: 'n', members: [] })).toThrow('server_group has neither policy nor policies[0]');
    expect(() => shape.serverGroup({ id: 'g', policy: 'spread' })).toThrow("server_group.policy 'spread' is not one of");
    expect(() => shape.server({ id: 'x', status: 'ACTIVE', metadata: { a: 1 } })).toThrow('server.metadata.a is not a string');
    expect(() => shape.hypervisor({ id: 1 })).toThrow('hypervisor.hypervisor_hostname is missing');
    expect(() => shape.availabilityZones({})).toThrow('body.availabilityZoneInfo is not a list');
  });
});
