import { startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

/**
 * The requests and answers of senlin-tempest-plugin's negative API tests
 * (senlin_tempest_plugin/tests/api/*_negative.py) whose targets need no setup: Senlin checks the
 * request body and query before it looks the object up, so a malformed request about an unknown
 * cluster is a 400, not a 404.
 */
type Case = [method: 'get' | 'post' | 'patch' | 'delete', path: string, body: unknown, status: number, message: string];

const UNKNOWN = 'f7a97fce-f495-44a8-b41a-7408139adacf';

const CASES: Case[] = [
  // cluster actions: the body first (test_cluster_action_negative.py)
  ['post', '/v1/clusters/cluster_id/actions', {}, 400, 'No action specified'],
  ['post', '/v1/clusters/cluster_id/actions', { resize: {}, check: {} }, 400, 'Multiple actions specified'],
  ['post', '/v1/clusters/cluster_id/actions', { bogus: {} }, 400, "Unrecognized action 'bogus' specified"],
  // recover's parameters are the engine's to judge: an unknown cluster first (test_cluster_recover.py)
  ['post', '/v1/clusters/e6e522f4-34d4-42f7-b7f1-45004e06f3d9/actions', { recover: { k1: 'v1' } }, 404, "The cluster 'e6e522f4-34d4-42f7-b7f1-45004e06f3d9' could not be found."],
  ['post', '/v1/clusters/cluster_id/actions', { recover: 'not-a-map' }, 400, 'The data provided is not a map'],
  // cluster update (test_cluster_update_negative.py)
  ['patch', `/v1/clusters/${UNKNOWN}`, { cluster: { bad: 'invalid' } }, 400, "Additional properties are not allowed ('bad' was unexpected)"],
  ['patch', `/v1/clusters/${UNKNOWN}`, {}, 400, "Malformed request data, missing 'cluster' key in request body."],
  ['patch', `/v1/clusters/${UNKNOWN}`, { cluster: { name: 'new-name' } }, 404, `The cluster '${UNKNOWN}' could not be found.`],
  // cluster policies (test_cluster_policy_list_negative.py)
  ['get', '/v1/clusters/7f23de64-60c4-456e-9e24-db86ac89480c/policies?bogus=foo', undefined, 400, 'Invalid parameter bogus'],
  ['get', '/v1/clusters/958c6fd2-a647-4b5a-8133-8b4232267b40/policies?sort=bad-sort', undefined, 400, "Unsupported sort key 'bad-sort' for 'sort'."],
  ['get', '/v1/clusters/0e59c1c7-7477-45ee-8f12-7e5b87373bf7/policies?enabled=bad-enabled', undefined, 400, "Invalid value 'bad-enabled' specified for 'enabled'"],
  ['get', '/v1/clusters/0259cbac-0fb3-480b-8f23-1ec59616f3af/policies', undefined, 404, "The cluster '0259cbac-0fb3-480b-8f23-1ec59616f3af' could not be found."],
  ['get', '/v1/clusters/965d7324-e3f7-4d77-8e7f-44c862b851f7/policies/POLICY_ID', undefined, 404, "The cluster '965d7324-e3f7-4d77-8e7f-44c862b851f7' could not be found."],
  // profiles and policies: update checks the body first
  ['patch', `/v1/profiles/${UNKNOWN}`, {}, 400, "Malformed request data, missing 'profile' key in request body."],
  ['patch', `/v1/profiles/${UNKNOWN}`, { profile: { name: 'new-name' } }, 404, `The profile '${UNKNOWN}' could not be found.`],
  ['patch', `/v1/policies/${UNKNOWN}`, {}, 400, "Malformed request data, missing 'policy' key in request body."],
  ['patch', `/v1/policies/${UNKNOWN}`, { policy: { name: 'foo', spec: {}, boo: 'bar' } }, 400, "Additional properties are not allowed ('spec', 'boo' were unexpected)"],
  ['patch', `/v1/nodes/${UNKNOWN}`, { node: { name: 'new-name' } }, 404, `The node '${UNKNOWN}' could not be found.`],
  ['patch', `/v1/nodes/${UNKNOWN}`, {}, 400, "Malformed request data, missing 'node' key in request body."],
  ['patch', `/v1/nodes/${UNKNOWN}`, { node: { bad: 1 } }, 400, "Additional properties are not allowed ('bad' was unexpected)"],
  ['patch', `/v1/profiles/${UNKNOWN}`, { profile: { bad: 1 } }, 400, "Additional properties are not allowed ('bad' was unexpected)"],
  ['patch', `/v1/policies/${UNKNOWN}`, { policy: {} }, 400, "'name' is a required property"],
  ['delete', `/v1/clusters/${UNKNOWN}?force=bad`, undefined, 400, "Invalid value 'bad' specified for 'force'"],
  ['patch', `/v1/clusters/${UNKNOWN}`, { cluster: { timeout: 'x' } }, 400, "The value for timeout must be an integer: 'x'."],
  // types
  ['get', '/v1/policy-types/13d70be3-5998-412b-ab75-da72a2f84c75', undefined, 404, "The policy_type '13d70be3-5998-412b-ab75-da72a2f84c75' could not be found."],
  ['get', '/v1/profile-types/58181c56-3166-4478-8981-e1d476065f2b', undefined, 404, "The profile_type '58181c56-3166-4478-8981-e1d476065f2b' could not be found."],
  // nodes
  ['post', '/v1/nodes', {}, 400, "Request body missing 'node' key."],
  ['post', '/v1/nodes', { node: { profile_id: 'fake_profile' } }, 400, "'name' is a required property"],
  ['post', '/v1/nodes', { node: { name: 'fake' } }, 400, "'profile_id' is a required property"],
  ['get', '/v1/nodes?cluster_id=fake', undefined, 400, 'Cannot find the given cluster: fake.'],
];

const LISTS: Array<[collection: string, unknownParam: string]> = [
  ['actions', 'Invalid parameter bogus'],
  ['clusters', "Invalid parameter 'bogus'"],
  ['events', 'Invalid parameter bogus'],
  ['nodes', 'Invalid parameter bogus'],
  ['policies', 'Invalid parameter bogus'],
  ['profiles', 'Invalid parameter bogus'],
];

const FILTERS: Array<[query: string, message: string]> = [
  // what the suite sends: the Python list's text as the value (status=%5B%27bad-status%27%5D)
  [`/v1/clusters?status=${encodeURIComponent("['bad-status']")}`, "Field value ['bad-status'] is invalid"],
  [`/v1/nodes?status=${encodeURIComponent("['bad-status']")}`, "Field value ['bad-status'] is invalid"],
  [`/v1/events?level=${encodeURIComponent("['bad-level']")}`, "Field value ['bad-level'] is invalid"],
  [`/v1/events?action=${encodeURIComponent("['bad-action']")}`, "Field value ['bad-action'] is invalid"],
  ['/v1/clusters?status=bad-status', 'Field value bad-status is invalid'],
  ['/v1/nodes?limit=-5', "Value must be >= 0 for field 'limit'."],
  ['/v1/actions?status=bad-status', 'Field value bad-status is invalid'],
  ['/v1/actions?action=CLUSTER_SCALE_OUT&action=bad-action', 'Field value bad-action is invalid'],
  ['/v1/nodes?sort=name:sideways', "Unsupported sort dir 'sideways' for 'sort'."],
];

/** Values Senlin's filters accept stay accepted (Trellis's own action names too). */
const ACCEPTED = [
  '/v1/clusters?status=ACTIVE&status=ERROR',
  '/v1/nodes?status=RECOVERING',
  '/v1/events?level=INFO&action=CLUSTER_RECOVER',
  '/v1/actions?action=NODE_OPERATION&status=WAITING_LIFECYCLE_COMPLETION',
  '/v1/actions?action=CLUSTER_REPAIR',
];

describe("Senlin's negative API checks, in Senlin's order", () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());
  const alice = () => h.as(TOKENS.alice, 'latest');

  it.each(CASES)('%s %s %j → %i %s', async (method, path, body, status, message) => {
    const client = alice();
    const res = method === 'get' || method === 'delete' ? await client[method](path) : await client[method](path, body);
    expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status, message });
  });

  describe.each(LISTS)('GET /v1/%s', (collection, unknownParam) => {
    it.each([
      ['bogus=foo', 400, unknownParam],
      ['limit=not-int', 400, "The value for limit must be an integer: 'not-int'."],
      ['global_project=True', 403, 'You are not authorized to complete this operation.'],
      ['global_project=not-bool', 400, "Invalid value 'not-bool' specified for 'global_project'"],
      ['sort=bad-sort', 400, "Unsupported sort key 'bad-sort' for 'sort'."],
      ['marker=bad-marker', 400, "The value for marker is not a valid UUID: 'bad-marker'."],
    ])('?%s → %i %s', async (query, status, message) => {
      const res = await alice().get(`/v1/${collection}?${query}`);
      expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status, message });
    });
  });

  it.each(ACCEPTED)('%s → 200', async (path) => {
    expect((await alice().get(path)).status).toBe(200);
  });

  it.each(FILTERS)('%s → 400 %s', async (path, message) => {
    const res = await alice().get(path);
    expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status: 400, message });
  });
});

describe("Senlin's cluster action request checks come before the cluster lookup", () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());
  const NOT_BOOL = "acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'";

  // tests/api/clusters/test_cluster_{add_nodes,del_nodes,check,policy_*,resize,scale_*}.py, cluster 'cluster_id'
  it.each([
    [{ add_nodes: {} }, "Value for 'nodes' must have at least 1 item(s)."],
    [{ add_nodes: { nodes: 'node_id' } }, "Items for 'nodes' must be unique"],
    [{ add_nodes: { nodes: [] } }, "Value for 'nodes' must have at least 1 item(s)."],
    [{ add_nodes: { nodes: ['id1', 'id1'] } }, "Items for 'nodes' must be unique"],
    [{ del_nodes: {} }, "Value for 'nodes' must have at least 1 item(s)."],
    [{ del_nodes: { nodes: 'node_id' } }, "Items for 'nodes' must be unique"],
    [{ del_nodes: { nodes: [] } }, "Value for 'nodes' must have at least 1 item(s)."],
    [{ del_nodes: { nodes: ['fake_id'], destroy_after_deletion: 'not_bool' } }, `Unrecognized value 'not_bool', ${NOT_BOOL}`],
    [{ check: ['k1', 'v1'] }, 'The data provided is not a map'],
    [{ policy_attach: 'POLICY_ID' }, 'The data provided is not a map'],
    [{ policy_attach: {} }, "'policy_id' is a required property"],
    [{ policy_attach: { policy_id: 'POLICY_ID', enabled: 'not-bool' } }, `Unrecognized value 'not-bool', ${NOT_BOOL}`],
    [{ policy_detach: 'fake_policy' }, 'The data provided is not a map'],
    [{ policy_detach: {} }, "'policy_id' is a required property"],
    [{ policy_update: 'POLICY_ID' }, 'The data provided is not a map'],
    [{ policy_update: {} }, "'policy_id' is a required property"],
    [{ policy_update: { policy_id: 'POLICY_ID', enabled: 'not-bool' } }, `Unrecognized value 'not-bool', ${NOT_BOOL}`],
    [{ resize: { adjustment_type: 'bogus', max_size: 20, min_size: 5, number: 5 } }, "Value 'bogus' is not acceptable for field 'adjustment_type'."],
    [{ resize: { max_size: 20, min_size: 5, number: 5 } }, 'Missing adjustment_type value for size adjustment.'],
    [{ resize: { adjustment_type: 'CHANGE_IN_CAPACITY', max_size: 20, min_size: 5 } }, 'Missing number value for size adjustment.'],
    [
      { resize: { adjustment_type: 'EXACT_CAPACITY', max_size: 20, min_size: 5, number: -1 } },
      "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'.",
    ],
    [{ resize: { adjustment_type: 'CHANGE_IN_CAPACITY', max_size: 10, min_size: 20, number: 5 } }, 'The specified min_size (20) is greater than the specified max_size (10).'],
    [{ scale_in: { count: 'bad-count' } }, "The value for count must be an integer: 'bad-count'."],
    [{ scale_out: { count: 'bad-count' } }, "The value for count must be an integer: 'bad-count'."],
    [{ scale_out: { count: -1 } }, "Value must be >= 0 for field 'count'."],
  ])('%j about an unknown cluster → 400 %s', async (body, message) => {
    const res = await h.as(TOKENS.alice, 'latest').post('/v1/clusters/cluster_id/actions', body);
    expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status: 400, message });
  });

  it('a well-formed request about an unknown cluster is a 404', async () => {
    const res = await h.as(TOKENS.alice, 'latest').post('/v1/clusters/db0faadf-9cd2-457f-b434-4891b77938ab/actions', { add_nodes: { nodes: ['node_id'] } });
    expect({ status: res.status, message: res.body?.error?.message }).toEqual({
      status: 404,
      message: "The cluster 'db0faadf-9cd2-457f-b434-4891b77938ab' could not be found.",
    });
  });
});
