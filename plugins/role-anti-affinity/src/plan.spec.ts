import { assignGroups, membersPerGroup, nodeRoles, parseRoles, profileRoles } from './plan';

describe('parseRoles', () => {
  it.each<[string, string[]]>([
    ['db', ['db']],
    [' db , cache,,db ', ['db', 'cache']],
    ['', []],
    [' , ', []],
  ])('%j → %j', (text, roles) => expect(parseRoles(text, 'x')).toEqual(roles));

  it.each([[['db']], [5], [null]])('refuses %j, naming the path', (value) => {
    expect(() => parseRoles(value, 'node n1 metadata.roles')).toThrow(`node n1 metadata.roles: must be a comma-separated string of role names, not ${JSON.stringify(value)}.`);
  });
});

describe('nodeRoles', () => {
  const profile = profileRoles({ properties: { metadata: { roles: 'db' } } });

  it.each<[string, Record<string, unknown> | undefined, string[], string]>([
    ['no metadata: the profile roles', undefined, ['db'], 'profile'],
    ['metadata without roles: the profile roles', { owner: 'x' }, ['db'], 'profile'],
    ['its own roles win', { roles: 'cache' }, ['cache'], 'node'],
    ['an empty roles string removes them', { roles: '' }, [], 'node'],
  ])('%s', (_case, metadata, roles, source) => {
    expect(nodeRoles({ id: 'n1', ...(metadata ? { metadata } : {}) } as never, profile)).toEqual({ roles, source });
  });

  it('a profile without metadata has none', () => {
    expect(profileRoles({ properties: {} })).toEqual({ roles: [], source: 'none' });
  });
});

describe('assignGroups', () => {
  it.each<[string, number[], boolean[], Array<string | null>]>([
    ['continues round robin from balanced groups', [2, 1], [true, true, true], ['b', 'a', 'b']],
    ['fills the emptiest group first, ties to the lower index', [0, 3], [true, true, true, true, true], ['a', 'a', 'a', 'a', 'b']],
    ['skips non-role nodes without advancing', [0, 0], [true, false, true], ['a', null, 'b']],
  ])('%s', (_case, existing, flags, expected) => {
    expect(assignGroups(['a', 'b'], existing, flags)).toEqual(expected);
  });
});

describe('membersPerGroup', () => {
  it('counts recorded groups, ignoring other groups and the excluded node', () => {
    const nodes = [
      { id: 'n1', data: { placement: { servergroup: 'a' } } },
      { id: 'n2', data: { placement: { servergroup: 'x' } } },
      { id: 'n3', data: null },
      { id: 'n4', data: { placement: { servergroup: 'b' } } },
    ];
    expect(membersPerGroup(nodes, ['a', 'b'])).toEqual([1, 1]);
    expect(membersPerGroup(nodes, ['a', 'b'], 'n4')).toEqual([1, 0]);
  });
});
