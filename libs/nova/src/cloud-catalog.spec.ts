import { createCloudCatalog } from './cloud-catalog';
import { FakeOpenStack, adminSettings, recordingSleep } from './testing/fake-openstack';

const NET_ID = '5f3c6a38-0f0a-4a63-9c0e-3d1b0e7c6a11';
const IMAGE_ID = 'a83c3c75-fc9c-4be2-aebf-735c080a4c25';

describe('KeystoneCloudCatalog (what a profile names, looked up with the caller’s token)', () => {
  let fake: FakeOpenStack;
  beforeEach(async () => {
    fake = await FakeOpenStack.start();
  });
  afterEach(() => fake.close());

  const endpoint = (type: string, url: string) => ({ type, name: type, endpoints: [{ interface: 'public', region: 'RegionOne', url }] });
  const catalog = () =>
    createCloudCatalog(adminSettings(fake, {}), { sleep: recordingSleep().sleep, random: () => 0.5, cwd: '/nonexistent', homeDir: '/nonexistent', retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });

  it("finds networks by id or name under Neutron's /v2.0, with the caller's token", async () => {
    fake.withKeystone({ catalog: fake.catalog([endpoint('network', `${fake.url}/network`)]) });
    fake.on('GET', `/network/v2.0/networks/${NET_ID}`, () => ({ status: 200, body: { network: { id: NET_ID, name: 'private' } } }));
    fake.on('GET', '/network/v2.0/networks', (req) => ({ status: 200, body: { networks: req.query.get('name') === 'private' ? [{ id: NET_ID, name: 'private' }] : [] } }));
    const c = catalog();
    expect(await c.findNetwork('user-token', NET_ID)).toBe('found');
    expect(await c.findNetwork('user-token', 'private')).toBe('found');
    expect(await c.findNetwork('user-token', 'elsewhere')).toBe('missing');
    const neutronCalls = fake.requests.filter((r) => r.pathname.startsWith('/network/'));
    expect(neutronCalls.map((r) => r.headers['x-auth-token'])).toEqual(['user-token', 'user-token', 'user-token']);
  });

  it('leaves networks and images unchecked in a cloud without a network or image service', async () => {
    fake.withKeystone();
    const c = catalog();
    expect(await c.findNetwork('user-token', 'private')).toBe('unchecked');
    expect(await c.findImage('user-token', 'cirros')).toBe('unchecked');
  });

  it('finds images in Glance by id, then by name', async () => {
    fake.withKeystone({ catalog: fake.catalog([endpoint('image', `${fake.url}/image/v2`)]) });
    fake.on('GET', `/image/v2/images/${IMAGE_ID}`, () => ({ status: 200, body: { id: IMAGE_ID, name: 'cirros' } }));
    fake.on('GET', '/image/v2/images', (req) => ({ status: 200, body: { images: req.query.get('name') === 'cirros' ? [{ id: IMAGE_ID }] : [] } }));
    const c = catalog();
    expect(await c.findImage('user-token', IMAGE_ID)).toBe('found');
    expect(await c.findImage('user-token', 'cirros')).toBe('found');
    expect(await c.findImage('user-token', 'cirros-0.4.0-x86_64-disk')).toBe('missing');
  });

  it('finds flavors in Nova by id, then by name, and throws an unavailable error when Nova does not answer', async () => {
    fake.withKeystone();
    fake.on('GET', /^\/compute\/v2\.1\/flavors\/.+/, (req) => (req.pathname.endsWith('/2') ? { status: 200, body: { flavor: { id: '2' } } } : { status: 404, body: {} }));
    fake.on('GET', '/compute/v2.1/flavors', () => ({ status: 200, body: { flavors: [{ id: '2', name: 'm1.small' }] } }));
    const c = catalog();
    expect(await c.findFlavor('user-token', '2')).toBe('found');
    expect(await c.findFlavor('user-token', 'm1.small')).toBe('found');
    expect(await c.findFlavor('user-token', 'm9.huge')).toBe('missing');
    fake.on('GET', /^\/compute\/v2\.1\/flavors/, () => ({ status: 503, body: { message: 'down' } }));
    await expect(c.findFlavor('user-token', 'm1.small')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
