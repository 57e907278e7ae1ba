import { NovaError } from '@trellis/nova';
import { NOVA_PROFILE_SPEC, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

/** senlin-tempest-plugin's spec_nova_server (common/constants.py) */
const TEMPEST_SPEC = { type: 'os.nova.server', version: '1.0', properties: { flavor: '1', name: 'new-server-test', image: 'cirros-fake', networks: [] } };

const withProperties = (properties: Record<string, unknown>) => ({ ...NOVA_PROFILE_SPEC, properties: { ...NOVA_PROFILE_SPEC.properties, ...properties } });

describe('profile specs as Senlin checked them (test_profile_create*.py, test_profile_validate*.py)', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  const create = (name: string, spec: unknown) => alice().post('/v1/profiles', { profile: { name, spec } });
  const validate = (spec: unknown) => alice().post('/v1/profiles/validate', { profile: { spec } });

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());
  afterEach(() => {
    h.cloud.down = null;
    h.cloud.networks = new Set(['private']);
  });

  it('accepts metadata values that are not strings, as Senlin did (the tempest suite sends simulated_wait_time: 10)', async () => {
    const spec = { ...TEMPEST_SPEC, properties: { ...TEMPEST_SPEC.properties, metadata: { simulated_wait_time: 10, flag: true } } };
    const res = await create('p-meta', spec);
    expect(res.status).toBe(201);
    expect(res.body.profile.spec.properties.metadata).toEqual({ simulated_wait_time: 10, flag: true });
    expect((await validate(spec)).status).toBe(200);
  });

  it('updates metadata with a key named hasOwnProperty as given (receivers had a 500 for it)', async () => {
    const created = await alice().post('/v1/profiles', { profile: { name: 'p-proto', spec: TEMPEST_SPEC, metadata: { a: 1, b: 2 } } });
    expect(created.status).toBe(201);
    const metadata = { a: 1, hasOwnProperty: { x: 1 } };

    const res = await alice().patch(`/v1/profiles/${created.body.profile.id}`, { profile: { metadata } });

    expect(res.status).toBe(200);
    expect((await alice().get(`/v1/profiles/${created.body.profile.id}`)).body.profile.metadata).toEqual(metadata);
  });

  it("refuses an unknown property in Senlin's words, naming the profile at create", async () => {
    const spec = { ...TEMPEST_SPEC, properties: { ...TEMPEST_SPEC.properties, bogus: 'foo' } };
    const created = await create('test-profile', spec);
    expect({ status: created.status, message: created.body.error.message }).toEqual({
      status: 400,
      message: "Failed in creating profile test-profile: Unrecognizable spec item 'bogus'",
    });
    const validated = await validate(spec);
    expect({ status: validated.status, message: validated.body.error.message }).toEqual({ status: 400, message: "Unrecognizable spec item 'bogus'" });
  });

  it.each([
    [{ flavor: 'm9.huge' }, "The specified flavor 'm9.huge' could not be found."],
    [{ image: 'cirros-0.4.0-x86_64-disk' }, "The specified image 'cirros-0.4.0-x86_64-disk' could not be found."],
    [{ networks: [{ network: 'private' }, { network: 'elsewhere' }] }, 'The specified network elsewhere could not be found.'],
  ])('refuses %j at create and validate, asking the cloud with the caller’s own token', async (properties, message) => {
    h.cloud.tokens.length = 0;
    const created = await create('p-unknown', withProperties(properties));
    expect({ status: created.status, message: created.body.error.message }).toEqual({ status: 400, message });
    const validated = await validate(withProperties(properties));
    expect({ status: validated.status, message: validated.body.error.message }).toEqual({ status: 400, message });
    expect(new Set(h.cloud.tokens)).toEqual(new Set([TOKENS.alice]));
    expect((await alice().get('/v1/profiles?name=p-unknown')).body.profiles).toEqual([]);
  });

  it('accepts the networks unchecked in a cloud without a network service', async () => {
    h.cloud.networks = null;
    const res = await create('p-no-neutron', withProperties({ networks: [{ network: 'anything' }] }));
    expect(res.status).toBe(201);
  });

  it('answers 503 when the cloud cannot be asked, and stores nothing', async () => {
    h.cloud.down = new NovaError({ service: 'image', status: null, method: 'GET', path: '/v2/images', serviceMessage: 'connect ECONNREFUSED' });
    const res = await create('p-cloud-down', NOVA_PROFILE_SPEC);
    expect(res.status).toBe(503);
    expect(res.body.error.message).toMatch(/^Trellis could not look up the profile's flavor 'm1.small' in the cloud: /);
    expect((await validate(NOVA_PROFILE_SPEC)).status).toBe(503);
    expect((await alice().get('/v1/profiles?name=p-cloud-down')).body.profiles).toEqual([]);
  });

  describe("Senlin's other profile types, kept but not built", () => {
    /** senlin-tempest-plugin's spec_heat_stack (common/constants.py), shortened */
    const HEAT_SPEC = {
      type: 'os.heat.stack',
      version: '1.0',
      properties: { template: { heat_template_version: '2014-10-16', resources: { random: { type: 'OS::Heat::RandomString' } } } },
    };
    const DOCKER_SPEC = { type: 'container.dockerinc.docker', version: '1.0', properties: { image: 'nginx', port: '2376' } };

    it.each([
      ['os.heat.stack-1.0', HEAT_SPEC],
      ['container.dockerinc.docker-1.0', DOCKER_SPEC],
    ])('accepts a %s profile, checked against its schema without asking the cloud', async (type, spec) => {
      h.cloud.tokens.length = 0;
      const created = await create(`p-${type}`, spec);
      expect(created.status).toBe(201);
      expect(created.body.profile).toMatchObject({ type, spec });
      expect((await validate(spec)).status).toBe(200);
      expect(h.cloud.tokens).toEqual([]);
    });

    it.each([
      [{ ...HEAT_SPEC, properties: {} }, "Both template and template_url are not specified for profile 'p-bad'."],
      [{ ...HEAT_SPEC, properties: { template_url: 'x', timeout: 'soon' } }, "Failed in creating profile p-bad: The value 'soon' is not a valid Integer"],
      [{ ...DOCKER_SPEC, properties: { port: 1 } }, "Failed in creating profile p-bad: Required spec item 'image' not provided"],
    ])('refuses %j in Senlin\'s words', async (spec, message) => {
      const res = await create('p-bad', spec);
      expect({ status: res.status, message: res.body.error.message }).toEqual({ status: 400, message });
    });

    it('refuses to make a cluster or a node of them, and answers a type mismatch in Senlin\'s words first', async () => {
      const heat = (await create('p-heat', HEAT_SPEC)).body.profile;
      const nova = (await create('p-nova', NOVA_PROFILE_SPEC)).body.profile;
      const refusal = `The profile '${heat.id}' is of type os.heat.stack-1.0, which Trellis keeps but does not build; clusters and nodes can be made of profile type os.nova.server-1.0 only.`;
      const cluster = await alice().post('/v1/clusters', { cluster: { name: 'c-heat', profile_id: heat.id } });
      expect({ status: cluster.status, message: cluster.body.error.message }).toEqual({ status: 400, message: refusal });
      const node = await alice().post('/v1/nodes', { node: { name: 'n-heat', profile_id: heat.id } });
      expect({ status: node.status, message: node.body.error.message }).toEqual({ status: 400, message: refusal });
      const novaCluster = await alice().post('/v1/clusters', { cluster: { name: 'c-nova', profile_id: nova.id } });
      expect(novaCluster.status).toBe(202);
      const mixed = await alice().post('/v1/nodes', { node: { name: 'n-mixed', profile_id: heat.id, cluster_id: novaCluster.body.cluster.id } });
      expect({ status: mixed.status, message: mixed.body.error.message }).toEqual({
        status: 400,
        message: 'Node and cluster have different profile type, operation aborted.',
      });
    });

    it('lists all three types with their support status, and shows each one\'s schema and operations', async () => {
      const listed = await alice('1.5').get('/v1/profile-types');
      expect(listed.body.profile_types).toEqual([
        { name: 'os.nova.server', version: '1.0', support_status: { '1.0': [{ status: 'SUPPORTED', since: '2016.04' }] } },
        { name: 'os.heat.stack', version: '1.0', support_status: { '1.0': [{ status: 'UNSUPPORTED', since: '2026.11' }] } },
        { name: 'container.dockerinc.docker', version: '1.0', support_status: { '1.0': [{ status: 'UNSUPPORTED', since: '2026.11' }] } },
      ]);
      const heat = await alice().get('/v1/profile-types/os.heat.stack-1.0');
      expect(heat.body.profile_type.schema.disable_rollback).toMatchObject({ type: 'Boolean', default: true, updatable: true });
      const ops = await alice().get('/v1/profile-types/container.dockerinc.docker-1.0/ops');
      expect(ops.body.operations.restart.parameters.wait_time).toMatchObject({ type: 'Integer', required: false });
    });
  });
});
