import { serverUpdate } from './profile-update';

describe('serverUpdate: what a new os.nova.server profile changes on a server (Senlin\'s server.py do_update)', () => {
  const base = { flavor: 'm1.tiny', image: 'cirros', networks: [{ network: 'private' }], metadata: { a: '1' } };

  it.each([
    ['nothing, for the same properties in another key order', { metadata: { a: '1' }, networks: [{ network: 'private' }], image: 'cirros', flavor: 'm1.tiny' }, {}],
    ['a new image', { ...base, image: 'fedora' }, { image: 'fedora' }],
    ['a new flavor', { ...base, flavor: 'm1.small' }, { flavor: 'm1.small' }],
    ['new metadata, as strings', { ...base, metadata: { a: 1, b: true } }, { metadata: { a: '1', b: 'true' } }],
    ['metadata removed', { ...base, metadata: undefined }, { metadata: {} }],
    ['a server name in the profile', { ...base, name: 'web' }, { name: 'web' }],
  ])('%s', (_what, to, params) => {
    expect(serverUpdate(base, to, 'node-1')).toEqual({ ok: true, params });
  });

  it('a profile name removed gives the server the node\'s name back (Senlin\'s _check_server_name)', () => {
    expect(serverUpdate({ ...base, name: 'web' }, base, 'node-1')).toEqual({ ok: true, params: { name: 'node-1' } });
    expect(serverUpdate({ ...base, name: 'node-1' }, base, 'node-1')).toEqual({ ok: true, params: {} });
  });

  it('refuses properties Senlin does not update, and networks, which Trellis does not update yet', () => {
    expect(serverUpdate(base, { ...base, key_name: 'k', user_data: 'x' }, 'n')).toEqual({
      ok: false,
      reason: 'the following properties are not updatable: key_name, user_data',
    });
    expect(serverUpdate(base, { ...base, networks: [{ network: 'public' }] }, 'n')).toEqual({
      ok: false,
      reason: 'updating the networks of a server is not supported by Trellis',
    });
  });
});
