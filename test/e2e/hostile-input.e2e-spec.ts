import { ApiClient, keystoneToken, type ApiResponse } from '../support/api-client';
import { act, createPolicy, zoneSpec } from '../support/placement.scenario';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Issue 18, points 3 and 4, as a table: every write endpoint of Trellis (the embedded default) is
 * sent integers beyond what Senlin and an int4 column accept, values of the wrong kind, NUL
 * characters in ids, names, maps and filters, and repeated, `name[]` and `name[key]` parameters.
 * Each answer is a 4xx naming the field, none a 5xx; afterwards every object reads as before and
 * the cluster takes the next valid action (nothing was half-done, nothing stayed locked).
 */

const NUL = 'x\u0000y';
/** what no integer field takes: beyond int4 either way, beyond any double's integer precision, fractions, other kinds */
const BAD_INTS: unknown[] = [2147483648, -2147483649, 1e20, '99999999999999999999', 1.5, '1e3', 'many', true, [1], { n: 1 }];
/** resize's number is a float (Senlin's FloatField): 1.5 and '1e3' are numbers */
const BAD_NUMBERS = BAD_INTS.filter((v) => v !== 1.5 && v !== '1e3');

interface Probe {
  /** what the table row says, for the failure message */
  label: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** the parameter or field the answer must name */
  names: string;
  /** 404 for an id that cannot exist; 400 otherwise */
  status?: number;
}

/** `body` with the value at `path` (`cluster.metadata.k`, `add_nodes.nodes[0]`) set, on a copy. */
function withField(body: unknown, path: string, value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  const keys = path.split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== '');
  let at: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    at[key] ??= {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys[keys.length - 1]] = value;
  return copy;
}

describe('hostile input to every write endpoint is a 4xx naming the field, and changes nothing (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // 416 requests of one project as fast as they go: past the default rate (20 a second, bursts of
    // 100) by design, and rate limits are not what this suite is about (apps/gateway/src/limits)
    t = await startTestTrellis({ env: { SIMULATOR_BUILD_DELAY_MS: '20', TRELLIS_REQUESTS_PER_SECOND: '0' } });
    const token = await keystoneToken(t.trellis.simulator!.authUrl, { name: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(t.trellis.url, token);
    const { profileId, clusterId } = await createProfileAndCluster(api, 'fuzz');
    ids.profile = profileId;
    ids.cluster = clusterId;
    ids.policy = await createPolicy(api, 'fuzz-zones', zoneSpec);
    expect((await act(api, 'fuzz', { policy_attach: { policy_id: 'fuzz-zones' } })).status).toBe('SUCCEEDED');
    const out = await act(api, 'fuzz', { scale_out: { count: 1 } });
    expect(out.status).toBe('SUCCEEDED');
    ids.action = out.id;
    ids.node = (await nodesOf(api, clusterId))[0].id;
    const receiver = await api.post('/v1/receivers', {
      receiver: { name: 'fuzz-hook', type: 'webhook', cluster_id: 'fuzz', action: 'CLUSTER_SCALE_OUT', params: { count: 1 } },
    });
    expect(receiver.status).toBe(201);
    ids.receiver = receiver.body.receiver.id;
  }, 120_000);
  afterAll(() => t?.close());

  /** Everything the probes could change, as the API shows it. */
  async function state(): Promise<unknown> {
    const read = async (path: string) => {
      const res = await api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      return res.body;
    };
    return {
      profile: await read(`/v1/profiles/${ids.profile}`),
      policy: await read(`/v1/policies/${ids.policy}`),
      cluster: await read(`/v1/clusters/${ids.cluster}`),
      bindings: await read(`/v1/clusters/${ids.cluster}/policies`),
      nodes: await read('/v1/nodes'),
      clusters: await read('/v1/clusters'),
      profiles: await read('/v1/profiles'),
      policies: await read('/v1/policies'),
      receivers: await read('/v1/receivers'),
      actions: await read('/v1/actions'),
    };
  }

  function intProbes(): Probe[] {
    const probes: Probe[] = [];
    const add = (method: Probe['method'], path: string, base: unknown, field: string, values: unknown[]) => {
      for (const v of values) {
        probes.push({ label: `${field} = ${JSON.stringify(v)}`, method, path, body: withField(base, field, v), names: field.split('.').pop()! });
      }
    };
    const cluster = `/v1/clusters/${ids.cluster}`;
    const newCluster = { cluster: { name: 'fuzz-new', profile_id: 'fuzz-profile' } };
    for (const f of ['desired_capacity', 'min_size', 'max_size', 'timeout']) add('POST', '/v1/clusters', newCluster, `cluster.${f}`, BAD_INTS);
    add('PATCH', cluster, { cluster: {} }, 'cluster.timeout', BAD_INTS);
    for (const base of [`${cluster}/actions`, `${cluster}/actions?dry_run=true`]) {
      add('POST', base, { scale_out: {} }, 'scale_out.count', BAD_INTS);
      add('POST', base, { scale_in: {} }, 'scale_in.count', BAD_INTS);
      add('POST', base, { resize: {} }, 'resize.min_size', BAD_INTS);
      add('POST', base, { resize: {} }, 'resize.max_size', BAD_INTS);
      add('POST', base, { resize: { adjustment_type: 'CHANGE_IN_PERCENTAGE', number: 10 } }, 'resize.min_step', BAD_INTS);
      add('POST', base, { resize: { adjustment_type: 'EXACT_CAPACITY' } }, 'resize.number', BAD_NUMBERS);
      add('POST', base, { resize: { adjustment_type: 'CHANGE_IN_CAPACITY', strict: false } }, 'resize.number', BAD_NUMBERS);
      add('POST', base, { policy_attach: { policy_id: 'fuzz-zones' } }, 'policy_attach.priority', [2147483648, 1]);
      add('POST', base, { policy_update: { policy_id: 'fuzz-zones' } }, 'policy_update.priority', [2147483648]);
    }
    const hook = { receiver: { name: 'fuzz-hook-2', type: 'webhook', cluster_id: 'fuzz', action: 'CLUSTER_SCALE_OUT', params: {} } };
    add('POST', '/v1/receivers', hook, 'receiver.params.count', BAD_INTS);
    add('PATCH', `/v1/receivers/${ids.receiver}`, { receiver: { params: {} } }, 'receiver.params.count', BAD_INTS);
    add('POST', `/v1/webhooks/${ids.receiver}/trigger?V=2`, {}, 'count', BAD_INTS);
    return probes;
  }

  function nulProbes(): Probe[] {
    const probes: Probe[] = [];
    const add = (method: Probe['method'], path: string, base: unknown, fields: string[]) => {
      for (const field of fields) {
        probes.push({ label: `NUL in ${field}`, method, path, body: withField(base, field, NUL), names: field });
      }
    };
    const cluster = `/v1/clusters/${ids.cluster}`;
    const spec = { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } };
    add('POST', '/v1/profiles', { profile: { name: 'fuzz-p2', spec } }, ['profile.name', 'profile.spec.properties.flavor', 'profile.metadata.k']);
    add('POST', '/v1/profiles/validate', { profile: { spec } }, ['profile.spec.type']);
    add('PATCH', `/v1/profiles/${ids.profile}`, { profile: {} }, ['profile.name', 'profile.metadata.k']);
    add('POST', '/v1/policies', { policy: { name: 'fuzz-pol2', spec: zoneSpec } }, ['policy.name', 'policy.spec.type', 'policy.spec.properties.zones[0].name']);
    add('POST', '/v1/policies/validate', { policy: { spec: zoneSpec } }, ['policy.spec.version']);
    add('PATCH', `/v1/policies/${ids.policy}`, { policy: {} }, ['policy.name']);
    add('POST', '/v1/clusters', { cluster: { name: 'fuzz-new', profile_id: 'fuzz-profile' } }, [
      'cluster.name',
      'cluster.profile_id',
      'cluster.metadata.k',
      'cluster.config.k',
    ]);
    add('PATCH', cluster, { cluster: {} }, ['cluster.name', 'cluster.profile_id', 'cluster.metadata.k', 'cluster.config.k']);
    for (const base of [`${cluster}/actions`, `${cluster}/actions?dry_run=true`]) {
      add('POST', base, { policy_attach: {} }, ['policy_attach.policy_id']);
      add('POST', base, { policy_detach: {} }, ['policy_detach.policy_id']);
      add('POST', base, { add_nodes: { nodes: [] } }, ['add_nodes.nodes[0]']);
      add('POST', base, { del_nodes: { nodes: [ids.node] } }, ['del_nodes.nodes[0]']);
      add('POST', base, { recover: {} }, ['recover.operation']);
      add('POST', base, { check: {} }, ['check.k']);
    }
    add('POST', '/v1/nodes', { node: { name: 'fuzz-n2', profile_id: 'fuzz-profile', cluster_id: 'fuzz' } }, [
      'node.name',
      'node.profile_id',
      'node.cluster_id',
      'node.role',
      'node.metadata.k',
    ]);
    add('PATCH', `/v1/nodes/${ids.node}`, { node: {} }, ['node.name', 'node.role', 'node.profile_id', 'node.metadata.k']);
    add('POST', `/v1/nodes/${ids.node}/actions`, { check: {} }, ['check.k']);
    add('POST', `/v1/nodes/${ids.node}/ops`, { reboot: {} }, ['reboot.type']);
    add('PATCH', `/v1/actions/${ids.action}`, { action: {} }, ['action.status']);
    add('POST', '/v1/receivers', { receiver: { name: 'fuzz-hook-2', type: 'webhook', cluster_id: 'fuzz', action: 'CLUSTER_SCALE_OUT' } }, [
      'receiver.name',
      'receiver.cluster_id',
      'receiver.params.k',
    ]);
    add('PATCH', `/v1/receivers/${ids.receiver}`, { receiver: {} }, ['receiver.name', 'receiver.params.count']);
    add('POST', `/v1/webhooks/${ids.receiver}/trigger?V=2`, {}, ['count']);
    add('POST', '/v1/evaluations', { snapshot: {} }, ['snapshot.k']);
    // an id with a NUL is an id nothing has
    const id = encodeURIComponent(NUL);
    for (const [method, path, body, kind] of [
      ['PATCH', `/v1/clusters/${id}`, { cluster: { timeout: 10 } }, 'cluster'],
      ['DELETE', `/v1/clusters/${id}`, undefined, 'cluster'],
      ['POST', `/v1/clusters/${id}/actions`, { scale_out: { count: 1 } }, 'cluster'],
      ['PATCH', `/v1/profiles/${id}`, { profile: { name: 'x' } }, 'profile'],
      ['DELETE', `/v1/profiles/${id}`, undefined, 'profile'],
      ['PATCH', `/v1/policies/${id}`, { policy: { name: 'x' } }, 'policy'],
      ['DELETE', `/v1/policies/${id}`, undefined, 'policy'],
      ['PATCH', `/v1/nodes/${id}`, { node: { name: 'x' } }, 'node'],
      ['DELETE', `/v1/nodes/${id}`, undefined, 'node'],
      ['POST', `/v1/nodes/${id}/actions`, { check: {} }, 'node'],
      ['POST', `/v1/nodes/${id}/ops`, { reboot: {} }, 'node'],
      ['PATCH', `/v1/actions/${id}`, { action: { status: 'CANCELLED' } }, 'action'],
      ['PATCH', `/v1/receivers/${id}`, { receiver: { name: 'x' } }, 'receiver'],
      ['DELETE', `/v1/receivers/${id}`, undefined, 'receiver'],
      ['POST', `/v1/webhooks/${id}/trigger?V=2`, undefined, 'receiver'],
    ] as const) {
      probes.push({ label: `NUL in the ${kind} id`, method, path, body, names: `The ${kind} '${NUL}' could not be found.`, status: 404 });
    }
    return probes;
  }

  function queryProbes(): Probe[] {
    const probes: Probe[] = [];
    const add = (method: Probe['method'], path: string, body: unknown, queries: Array<[string, string]>) => {
      for (const [query, name] of queries) probes.push({ label: `?${query}`, method, path: `${path}?${query}`, body, names: `'${name}`, status: 400 });
    };
    const scalar = (name: string, a: string, b: string): Array<[string, string]> => [
      [`${name}=${a}&${name}=${b}`, name],
      [`${name}[]=${a}`, name],
      [`${name}[x]=${a}`, name],
      [`${name}=${encodeURIComponent(NUL)}`, name],
    ];
    add('POST', `/v1/clusters/${ids.cluster}/actions`, { scale_out: { count: 1 } }, [...scalar('dry_run', 'true', 'false'), ['dry_run=maybe', 'dry_run']]);
    add('DELETE', `/v1/clusters/${ids.cluster}`, undefined, scalar('force', 'true', 'false'));
    add('DELETE', `/v1/nodes/${ids.node}`, undefined, scalar('force', 'true', 'false'));
    add('POST', `/v1/webhooks/${ids.receiver}/trigger`, undefined, scalar('V', '2', '2'));
    for (const list of ['/v1/clusters', '/v1/nodes', '/v1/profiles', '/v1/policies', '/v1/actions', '/v1/events', '/v1/receivers']) {
      add('GET', list, undefined, [
        ...scalar('limit', '1', '2'),
        ['limit=2147483648', 'limit'],
        ...scalar('sort', 'name', 'created_at'),
        ...scalar('global_project', 'false', 'true'),
        [`name=ok&name=${encodeURIComponent(NUL)}`, 'name'],
        ['name[]=fuzz', 'name'],
        ['name[a]=fuzz', 'name'],
      ]);
    }
    add('GET', `/v1/nodes/${ids.node}`, undefined, scalar('show_details', 'true', 'false'));
    return probes;
  }

  it('answers each probe with a 4xx naming its field and changes nothing; the cluster then scales', async () => {
    const before = await state();
    const probes = [...intProbes(), ...nulProbes(), ...queryProbes()];
    const wrong: string[] = [];
    for (const p of probes) {
      const res: ApiResponse = await api.call(p.method, p.path, p.body);
      const message: string = res.body?.error?.message ?? JSON.stringify(res.body);
      const expected = p.status ?? 400;
      if (res.status !== expected || !message.includes(p.names)) {
        wrong.push(`${p.method} ${p.path} (${p.label}): ${res.status} ${message}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(probes.length).toBeGreaterThan(300);
    expect(await state()).toEqual(before);

    const next = await act(api, 'fuzz', { scale_out: { count: 1 } });
    expect(next.status).toBe('SUCCEEDED');
  }, 180_000);
});
