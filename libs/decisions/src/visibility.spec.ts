import { createHash } from 'node:crypto';
import { HostNames, hideHosts, hiderOf, hostHider, hostIdOf, hostNamesIn, patternText } from './visibility';

/** Nova's nova.utils.generate_hostid, written out here independently of the code under test */
const novaHostId = (project: string, host: string) => createHash('sha224').update(`${project}${host}`).digest('hex');

describe('hideHosts', () => {
  const projectId = 'demo-project-id';
  const h1 = novaHostId(projectId, 'host-1');
  const h10 = novaHostId(projectId, 'host-10');
  const opts = { projectId, hostNames: ['host-1', 'host-10'] };

  it("computes Nova's hostId: sha224 of project id then host, lowercase hex", () => {
    expect(hostIdOf(projectId, 'host-1')).toBe(h1);
    expect(h1).toMatch(/^[0-9a-f]{56}$/);
    expect(hostIdOf('other', 'host-1')).not.toBe(h1);
  });

  it('replaces whole strings and whole tokens, the longest name first', () => {
    expect(hideHosts('host-1', opts)).toBe(h1);
    expect(hideHosts('host-10', opts)).toBe(h10);
    expect(hideHosts("Nodes a, b share the host 'host-10'.", opts)).toBe(`Nodes a, b share the host '${h10}'.`);
    expect(hideHosts('on host host-1 in zone az1; host-10/host-1', opts)).toBe(`on host ${h1} in zone az1; ${h10}/${h1}`);
  });

  it('ends a name at a full stop or a leading dot that no name character continues', () => {
    expect(hideHosts('Replaced vis-1 on host host-10.', opts)).toBe(`Replaced vis-1 on host ${h10}.`);
    expect(hideHosts('(host-1). ...host-1', opts)).toBe(`(${h1}). ...${h1}`);
    expect(hideHosts('a.host-1 host-1.b', opts)).toBe('a.host-1 host-1.b');
  });

  it('leaves a name that is only part of a longer token', () => {
    for (const s of ['host-100', 'xhost-1', 'host-1.example.com', 'my_host-1', 'host-1a']) expect(hideHosts(s, opts)).toBe(s);
    expect(hideHosts('host-1.example.com', { projectId, hostNames: ['host-1', 'host-1.example.com'] })).toBe(
      novaHostId(projectId, 'host-1.example.com'),
    );
  });

  it('treats names literally, not as patterns', () => {
    expect(hideHosts('hostX1 host.1', { projectId, hostNames: ['host.1'] })).toBe(`hostX1 ${novaHostId(projectId, 'host.1')}`);
  });

  it('walks nested arrays and objects, keys included, and keeps non-string values', () => {
    const input = {
      n: 1,
      ok: true,
      none: null,
      list: [['host-1', 2, false], { deep: { host: 'host-10' } }],
      byHost: { 'host-1': ['a'] },
    };
    expect(hideHosts(input, opts)).toStrictEqual({
      n: 1,
      ok: true,
      none: null,
      list: [[h1, 2, false], { deep: { host: h10 } }],
      byHost: { [h1]: ['a'] },
    });
  });

  it('does not change its input', () => {
    const input = { cloud: { hypervisors: [{ hypervisor_hostname: 'host-1' }] }, nodes: [{ host: 'host-1' }] };
    const before = JSON.parse(JSON.stringify(input));
    const out = hideHosts(input, opts);
    expect(input).toStrictEqual(before);
    expect(out).not.toBe(input);
    expect(out.nodes).not.toBe(input.nodes);
  });

  it('replaces the hypervisor list of a snapshot by a note with their number', () => {
    const out = hideHosts(
      { input: { cloud: { availability_zones: ['az1'], hypervisors: [{ id: '1', hypervisor_hostname: 'host-1', service: { host: 'host-1' } }, {}], server_groups: [] } } },
      opts,
    );
    expect(out.input.cloud).toStrictEqual({
      availability_zones: ['az1'],
      hypervisors: [],
      server_groups: [],
      hidden: { hypervisors: '2 hypervisors; hypervisor and host names are shown to admins only' },
    });
  });

  it('ignores names that are hostIds already and copies when there are no names', () => {
    expect(hideHosts(h1, { projectId, hostNames: [h1] })).toBe(h1);
    const v = { a: ['host-1'] };
    const out = hideHosts(v, { projectId, hostNames: [] });
    expect(out).toStrictEqual(v);
    expect(out).not.toBe(v);
  });
});

describe('hostNamesIn', () => {
  it('finds hypervisor names, service hosts, host members and host lists', () => {
    const names = hostNamesIn({
      cloud: { hypervisors: [{ hypervisor_hostname: 'hv1.example.com', service: { host: 'hv1' } }] },
      cluster: { nodes: [{ data: { placement: { host: 'host-1' } }, server: { host: 'host-2', availability_zone: 'az1' } }] },
      items: [{ zoneName: 'az1', hosts: ['host-3'] }],
      other: { host: null, hosts: [7] },
    });
    expect([...names].sort()).toEqual(['host-1', 'host-2', 'host-3', 'hv1', 'hv1.example.com']);
  });
});

describe('hostHider: names looked up token by token give what one pattern of every name gives', () => {
  it('on random strings of host-like names, dots, dashes and other characters, for names that are whole tokens', () => {
    let seed = 11;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const parts = ['host', 'h', '1', '10', 'az1', 'compute', 'example', 'com', '_x'];
    const name = () => Array.from({ length: 1 + random(3) }, () => parts[random(parts.length)]).join(['-', '.', ''][random(3)]);
    const glue = [' ', '.', '. ', '-', ':', '/', '..', '', ', ', '(', ')', '=', '_'];
    for (let round = 0; round < 300; round++) {
      const names = [...new Set(Array.from({ length: 1 + random(12) }, name))].filter((n) => /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/.test(n));
      const text = Array.from({ length: 1 + random(10) }, () => (random(2) ? names[random(names.length)] : name()) + glue[random(glue.length)]).join('');
      const project = `p${random(3)}`;
      const byToken = hostHider({ projectId: project, hostNames: names })({ status_reason: text, [text]: [text] });
      const byPattern = hiderOf(patternText(names, project))({ status_reason: text, [text]: [text] });
      expect(byToken).toEqual(byPattern);
    }
  });

  it('takes the one pattern when a name is not a whole token', () => {
    const hide = hostHider({ projectId: 'p', hostNames: ['rack 7', 'host-1'] });
    expect(hide('on rack 7 and host-1.')).toBe(`on ${hostIdOf('p', 'rack 7')} and ${hostIdOf('p', 'host-1')}.`);
  });
});

describe('HostNames', () => {
  const id = hostIdOf('p', 'host-1');

  it('keeps each name once, without empty names and hostIds, and says whether all are whole tokens', () => {
    const names = HostNames.of(['host-1', 'host-1', '', id, 'host-2.example.com']);
    expect([...names.names]).toEqual(['host-1', 'host-2.example.com']);
    expect(names.tokens).toBe(true);
    expect(HostNames.of(['host-1', 'rack 7']).tokens).toBe(false);
  });

  it('adds names without changing the prepared ones, and is itself when nothing is added', () => {
    const names = HostNames.of(['host-1', 'host-2']);
    expect(names.with(['host-2', id, ''])).toBe(names);
    const more = names.with(['host-3', 'rack 7']);
    expect([...more.names]).toEqual(['host-1', 'host-2', 'host-3', 'rack 7']);
    expect(more.tokens).toBe(false);
    expect([...names.names]).toEqual(['host-1', 'host-2']);
    // a hider of prepared names hides as one of the plain list
    const text = 'host-3 on rack 7 beside host-1.';
    expect(hostHider({ projectId: 'p', hostNames: more })(text)).toBe(hideHosts(text, { projectId: 'p', hostNames: [...more.names] }));
    expect(hostHider({ projectId: 'p', hostNames: more })(text)).toBe(`${hostIdOf('p', 'host-3')} on ${hostIdOf('p', 'rack 7')} beside ${id}.`);
  });
});
