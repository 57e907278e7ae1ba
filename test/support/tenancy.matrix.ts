/**
 * The tenancy matrix (issue 12): for every route the gateway serves, what a member of another
 * project tries against project A's objects, and what it must get. Run by test/e2e/tenancy.e2e-spec.ts
 * (simulator) and test/openstack/tenancy.os-spec.ts (real Keystone and Nova), over REST and RPC.
 *
 * Templates name the objects: `{cluster}`, `{cluster.name}`, `{cluster.short}` (an id prefix) are
 * project A's; `{own.cluster}` is the trying project's own; `{idem}` is the key (Idempotency-Key,
 * RPC message id) A's writes were made with. tenancy.scenario.ts fills them in once with A's
 * objects and once with objects that exist nowhere, and the two answers must be the same.
 */

export interface Attempt {
  /** the route's path parameters (`cluster_id`), as templates */
  path?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** sent as Idempotency-Key (REST) and as the message id (RPC) */
  key?: string;
  /** what a member of another project gets */
  status: number;
  /** the answer's `error.message`, as a template */
  message?: string;
  /** refused with 403 to every member and reader, A's own included (cloud admin only) */
  adminOnly?: boolean;
  /**
   * The same read by A's own member: the status it gets, which shows the request reaches A's
   * objects. With 200 the answer must hold something of A's that the request did not name,
   * unless `sees` is false (a marker naming A's last object: an empty page).
   */
  owner?: number;
  sees?: boolean;
}

/** `The <kind> '<identity>' could not be found.`: Senlin's 404 for an object of another project. */
const notFound = (kind: string, identity: string, extra: Omit<Attempt, 'status' | 'message'> = {}): Attempt => ({
  ...extra,
  status: 404,
  message: `The ${kind} '${identity}' could not be found.`,
});
/** A read by id, name or short id of A's object: 404 for others, 200 for A. */
const readOf = (kind: string, param: string, identity: string, query?: Record<string, string>): Attempt =>
  notFound(kind, identity, { path: { [param]: identity }, query, owner: 200 });
/** The three identities Senlin's lookup takes. */
const readsOf = (kind: string, param: string, byName = true): Attempt[] => [
  readOf(kind, param, `{${kind}}`),
  ...(byName ? [readOf(kind, param, `{${kind}.name}`)] : []),
  readOf(kind, param, `{${kind}.short}`),
];
const badRequest = (message: string, extra: Omit<Attempt, 'status' | 'message'> = {}): Attempt => ({ ...extra, status: 400, message });
/** A list: 200 without A's objects (A sees its own in it). */
const list = (query?: Record<string, string>): Attempt => ({ query, status: 200, owner: 200 });
/** Senlin's marker names an item of the caller's own collection; another project's is unknown. */
const marker = (id: string): Attempt =>
  badRequest(`Invalid value '${id}' specified for 'marker'`, { query: { marker: id }, owner: 200, sees: false });
const globalProject: Attempt = { query: { global_project: 'true' }, status: 403, adminOnly: true };
const lists = (collection: string, filters: Array<Record<string, string>>): Attempt[] => [
  list(),
  ...filters.map((f) => list(f)),
  marker(`{${collection}}`),
  globalProject,
];

// the image and flavor both the simulator and ../shared/openstack have
const profileSpec = { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } };
const policySpec = { type: 'senlin.policy.affinity', version: 1.0, properties: { servergroup: { policies: 'anti-affinity' } } };

/** Profiles and policies: objects made of a spec, which Senlin lists, makes, validates, shows, renames and deletes. */
function specCollection(kind: 'profile' | 'policy', collection: string, spec: unknown): Record<string, Attempt[]> {
  const param = `${kind}_id`;
  return {
    [`GET /v1/${collection}`]: lists(kind, [{ name: `{${kind}.name}` }]),
    [`POST /v1/${collection}`]: [{ body: { [kind]: { name: 'tenancy-extra', spec } }, status: 201 }],
    [`POST /v1/${collection}/validate`]: [{ body: { [kind]: { spec } }, status: 200 }],
    [`GET /v1/${collection}/:${param}`]: readsOf(kind, param),
    [`PATCH /v1/${collection}/:${param}`]: [notFound(kind, `{${kind}}`, { path: { [param]: `{${kind}}` }, body: { [kind]: { name: 'stolen' } } })],
    [`DELETE /v1/${collection}/:${param}`]: [`{${kind}.name}`, `{${kind}.short}`].map((id) => notFound(kind, id, { path: { [param]: id } })),
  };
}

/** A cluster action on A's cluster: 404 however valid its body, with or without dry_run. */
const CLUSTER_ACTIONS: Record<string, unknown> = {
  scale_out: { count: 1 },
  scale_in: { count: 1 },
  resize: { adjustment_type: 'EXACT_CAPACITY', number: 1 },
  policy_attach: { policy_id: '{policy}' },
  policy_detach: { policy_id: '{policy}' },
  policy_update: { policy_id: '{policy}', enabled: false },
  add_nodes: { nodes: ['{own.node}'] },
  del_nodes: { nodes: ['{node}'] },
  check: {},
  repair: {},
  recover: { operation: 'REBOOT' },
  replace_nodes: { nodes: { '{node}': '{own.node}' } },
};
const onCluster = (cluster: string, body: unknown, dryRun: boolean, extra: Omit<Attempt, 'status' | 'message'> = {}): Omit<Attempt, 'status'> => ({
  ...extra,
  path: { cluster_id: cluster },
  body,
  ...(dryRun ? { query: { dry_run: 'true' } } : {}),
});
const clusterActions: Attempt[] = [
  ...[false, true].flatMap((dryRun) =>
    Object.entries(CLUSTER_ACTIONS).map(([key, params]) => notFound('cluster', '{cluster}', onCluster('{cluster}', { [key]: params }, dryRun))),
  ),
  notFound('cluster', '{cluster.name}', onCluster('{cluster.name}', { scale_out: { count: 1 } }, false)),
  notFound('cluster', '{cluster.short}', onCluster('{cluster.short}', { check: {} }, true)),
  // A's keys: the answers A's writes stored under them are A's alone
  notFound('cluster', '{cluster}', onCluster('{cluster}', { scale_out: { count: 1 } }, false, { key: '{idem}' })),
  notFound('cluster', '{cluster}', onCluster('{cluster}', { check: {} }, false, { key: '{idem}' })),
  // complete_lifecycle names an action, not the cluster
  notFound('action', '{action}', onCluster('{cluster}', { complete_lifecycle: { lifecycle_action_token: '{action}' } }, false)),
  notFound('action', '{action}', onCluster('{own.cluster}', { complete_lifecycle: { lifecycle_action_token: '{action}' } }, false)),
  // the trying project's own cluster, naming A's policy or nodes
  ...[false, true].flatMap((dryRun) => [
    badRequest("The specified policy '{policy}' could not be found.", onCluster('{own.cluster}', { policy_attach: { policy_id: '{policy}' } }, dryRun)),
    badRequest("The specified policy '{policy}' could not be found.", onCluster('{own.cluster}', { policy_detach: { policy_id: '{policy}' } }, dryRun)),
    badRequest("The specified policy '{policy.name}' could not be found.", onCluster('{own.cluster}', { policy_update: { policy_id: '{policy.name}' } }, dryRun)),
    badRequest("Nodes not found: ['{node}'].", onCluster('{own.cluster}', { add_nodes: { nodes: ['{node}'] } }, dryRun)),
    badRequest("Nodes not found: ['{node.name}'].", onCluster('{own.cluster}', { del_nodes: { nodes: ['{node.name}'] } }, dryRun)),
    badRequest("Replacement nodes not found: ['{node}'].", onCluster('{own.cluster}', { replace_nodes: { nodes: { '{own.node}': '{node}' } } }, dryRun)),
    badRequest("Original nodes not found: ['{node}'].", onCluster('{own.cluster}', { replace_nodes: { nodes: { '{node}': '{own.node}' } } }, dryRun)),
  ]),
  // its own dry run: the decision holds nothing of A's (server groups, hosts, nodes)
  { ...onCluster('{own.cluster}', { scale_out: { count: 1 } }, true), status: 200 },
];

/** A snapshot for POST /v1/evaluations naming A's cluster and policy (Senlin's worked example, test/conformance). */
const evaluation = {
  hook: 'pre_op',
  policies: [
    {
      id: '{policy}',
      name: '{policy.name}',
      spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'zone1', weight: 100 }, { name: 'zone2', weight: 100 }] } },
      enabled: true,
      binding_id: 'b1',
      attached_at: '2026-01-01T00:00:00Z',
      binding_data: {},
      last_op: null,
    },
  ],
  cluster: {
    id: '{cluster}',
    name: '{cluster.name}',
    min_size: 0,
    max_size: -1,
    desired_capacity: 0,
    profile: { type: 'os.nova.server-1.0', spec: { type: 'os.nova.server', version: '1.0', properties: { flavor: '1', image: 'i' } } },
    nodes: [],
  },
  cloud: { availability_zones: ['zone1', 'zone2'] },
  action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } },
};

/**
 * One row per route (`METHOD /nest/path`), every route of the gateway: a route without a row fails
 * the suite ("route X has no tenancy row"). Rows of routes without project data still try them, so
 * their answers are searched for A's data too.
 */
export const TENANCY_MATRIX: Readonly<Record<string, readonly Attempt[]>> = {
  'GET /': [{ status: 300 }],
  'GET /versions': [{ status: 300 }],
  'GET /v1': [{ status: 200 }],
  'GET /healthz': [{ status: 200 }],
  'GET /readyz': [{ status: 200 }],
  'GET /metrics': [{ status: 200 }],
  // the web page: its files, and its sign-in, which says whom the caller's own token belongs to
  'GET /ui': [{ status: 200 }],
  'GET /ui/:file': [{ path: { file: 'app.js' }, status: 200 }, notFound('file', '{cluster}', { path: { file: '{cluster}' } })],
  'GET /ui/session': [{ status: 200 }],
  'POST /ui/session': [
    {
      body: { username: '{cluster.name}', password: 'a-guess', project: '{cluster.name}' },
      status: 401,
      message: "Keystone refused user '{cluster.name}' in project '{cluster.name}' (domain 'Default'): check the name, password and project.",
    },
  ],
  'GET /v1/build-info': [{ status: 200 }],
  'GET /v1/services': [{ status: 403, adminOnly: true }],
  'GET /v1/profile-types': [{ status: 200 }],
  'GET /v1/profile-types/:type_name': [{ path: { type_name: 'os.nova.server-1.0' }, status: 200 }],
  'GET /v1/profile-types/:type_name/ops': [{ path: { type_name: 'os.nova.server-1.0' }, status: 200 }],
  'GET /v1/policy-types': [{ status: 200 }],
  'GET /v1/policy-types/:type_name': [{ path: { type_name: 'senlin.policy.affinity-1.0' }, status: 200 }],

  ...specCollection('profile', 'profiles', profileSpec),
  ...specCollection('policy', 'policies', policySpec),

  'GET /v1/clusters': lists('cluster', [{ name: '{cluster.name}' }, { sort: 'name:desc' }]),
  'POST /v1/clusters': [
    badRequest("The specified profile '{profile}' could not be found.", { body: { cluster: { name: 'stolen', profile_id: '{profile}' } } }),
    badRequest("The specified profile '{profile.name}' could not be found.", { body: { cluster: { name: 'stolen', profile_id: '{profile.name}' } } }),
  ],
  'GET /v1/clusters/:cluster_id': readsOf('cluster', 'cluster_id'),
  'PATCH /v1/clusters/:cluster_id': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}' }, body: { cluster: { name: 'stolen' } } }),
    notFound('cluster', '{cluster.name}', { path: { cluster_id: '{cluster.name}' }, body: { cluster: { timeout: 10 } } }),
    badRequest("The specified profile '{profile}' could not be found.", { path: { cluster_id: '{own.cluster}' }, body: { cluster: { profile_id: '{profile}' } } }),
  ],
  'DELETE /v1/clusters/:cluster_id': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}' } }),
    notFound('cluster', '{cluster.short}', { path: { cluster_id: '{cluster.short}' }, query: { force: 'true' } }),
  ],
  'GET /v1/clusters/:cluster_id/attrs/:path': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}', path: 'physical_id' }, owner: 200 }),
    notFound('cluster', '{cluster.name}', { path: { cluster_id: '{cluster.name}', path: 'name' }, owner: 200 }),
  ],
  'POST /v1/clusters/:cluster_id/actions': clusterActions,
  'POST /v1/clusters/:cluster_id/ops': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}' }, body: { reboot: { params: { type: 'SOFT' } } } }),
    notFound('cluster', '{cluster.name}', { path: { cluster_id: '{cluster.name}' }, body: { stop: { filters: { role: 'x' } } } }),
  ],
  'GET /v1/clusters/:cluster_id/findings': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}' }, query: { status: 'all' }, owner: 200 }),
    notFound('cluster', '{cluster.name}', { path: { cluster_id: '{cluster.name}' }, owner: 200 }),
  ],
  'GET /v1/clusters/:cluster_id/policies': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}' }, owner: 200 }),
    notFound('cluster', '{cluster.name}', { path: { cluster_id: '{cluster.name}' }, query: { policy_name: '{policy.name}' }, owner: 200 }),
  ],
  'GET /v1/clusters/:cluster_id/policies/:policy_id': [
    notFound('cluster', '{cluster}', { path: { cluster_id: '{cluster}', policy_id: '{policy}' }, owner: 200 }),
    notFound('policy', '{policy}', { path: { cluster_id: '{own.cluster}', policy_id: '{policy}' } }),
  ],

  'GET /v1/nodes': [
    ...lists('node', [{ name: '{node.name}' }, { show_details: 'true' }]),
    badRequest('Cannot find the given cluster: {cluster}.', { query: { cluster_id: '{cluster}' }, owner: 200 }),
    badRequest('Cannot find the given cluster: {cluster.name}.', { query: { cluster_id: '{cluster.name}' }, owner: 200 }),
  ],
  'POST /v1/nodes': [
    badRequest("The specified profile '{profile}' could not be found.", { body: { node: { name: 'stolen', profile_id: '{profile}' } } }),
    badRequest("The specified cluster '{cluster}' could not be found.", {
      body: { node: { name: 'stolen', profile_id: '{own.profile}', cluster_id: '{cluster}' } },
    }),
    badRequest("The specified cluster '{cluster.name}' could not be found.", {
      body: { node: { name: 'stolen', profile_id: '{own.profile}', cluster_id: '{cluster.name}' } },
      key: '{idem}',
    }),
  ],
  'GET /v1/nodes/:node_id': [...readsOf('node', 'node_id'), readOf('node', 'node_id', '{node}', { show_details: 'true' })],
  'PATCH /v1/nodes/:node_id': [
    notFound('node', '{node}', { path: { node_id: '{node}' }, body: { node: { name: 'stolen' } } }),
    notFound('node', '{node.name}', { path: { node_id: '{node.name}' }, body: { node: { role: 'db' } }, key: '{idem}' }),
    badRequest("The specified profile '{profile}' could not be found.", { path: { node_id: '{own.node}' }, body: { node: { profile_id: '{profile}' } } }),
  ],
  'DELETE /v1/nodes/:node_id': [
    notFound('node', '{node}', { path: { node_id: '{node}' } }),
    notFound('node', '{node.short}', { path: { node_id: '{node.short}' }, query: { force: 'true' } }),
  ],
  'POST /v1/nodes/:node_id/actions': [
    notFound('node', '{node}', { path: { node_id: '{node}' }, body: { check: {} } }),
    notFound('node', '{node.name}', { path: { node_id: '{node.name}' }, body: { recover: { operation: 'REBOOT' } } }),
  ],
  'POST /v1/nodes/:node_id/ops': [
    notFound('node', '{node}', { path: { node_id: '{node}' }, body: { reboot: { type: 'SOFT' } } }),
    notFound('node', '{node.short}', { path: { node_id: '{node.short}' }, body: { stop: {} } }),
  ],

  'GET /v1/actions': lists('action', [{ cluster_id: '{cluster}' }, { cluster_id: '{cluster.name}' }, { target: '{cluster}' }, { action: 'CLUSTER_SCALE_OUT' }]),
  'GET /v1/actions/:action_id': readsOf('action', 'action_id', false),
  'PATCH /v1/actions/:action_id': [
    notFound('action', '{action}', { path: { action_id: '{action}' }, body: { action: { status: 'CANCELLED' } } }),
    notFound('action', '{action.short}', { path: { action_id: '{action.short}' }, body: { action: { status: 'CANCELLED' } }, query: { force: 'true' } }),
  ],
  'POST /v1/actions/:action_id/replay': [{ path: { action_id: '{action}' }, status: 403, adminOnly: true }],
  'GET /v1/actions/:action_id/decision': [
    readOf('action', 'action_id', '{action}'),
    readOf('action', 'action_id', '{action.short}'),
    // the trying project's own decision: its snapshot holds its own server groups only
    { path: { action_id: '{own.action}' }, status: 200 },
  ],
  'POST /v1/evaluations': [{ body: evaluation, status: 200 }],

  'GET /v1/events': lists('event', [
    { cluster_id: '{cluster}' },
    { cluster_id: '{cluster.name}' },
    { oid: '{node}' },
    { oid: '{cluster}' },
    { oname: '{cluster.name}' },
    { otype: 'CLUSTER' },
  ]),
  'GET /v1/events/:event_id': readsOf('event', 'event_id', false),

  'GET /v1/receivers': lists('receiver', [{ name: '{receiver.name}' }, { cluster_id: '{cluster}' }, { user: '{user}' }]),
  'POST /v1/receivers': [
    // A made its receiver over RPC with this very request and message id: the stored answer is A's alone
    badRequest("The referenced cluster '{cluster}' could not be found.", {
      body: { receiver: { name: '{receiver.name}', type: 'webhook', cluster_id: '{cluster}', action: 'CLUSTER_SCALE_OUT', params: { count: 1 } } },
      key: '{idem}',
    }),
    badRequest("The referenced cluster '{cluster}' could not be found.", {
      body: { receiver: { name: 'stolen', type: 'webhook', cluster_id: '{cluster}', action: 'CLUSTER_SCALE_OUT' } },
    }),
    badRequest("The referenced cluster '{cluster.name}' could not be found.", {
      body: { receiver: { name: 'stolen', type: 'webhook', cluster_id: '{cluster.name}', action: 'CLUSTER_DEL_NODES', params: { nodes: ['{node}'] } } },
    }),
  ],
  'GET /v1/receivers/:receiver_id': readsOf('receiver', 'receiver_id'),
  'PATCH /v1/receivers/:receiver_id': [
    notFound('receiver', '{receiver}', { path: { receiver_id: '{receiver}' }, body: { receiver: { name: 'stolen' } } }),
    notFound('receiver', '{receiver.name}', { path: { receiver_id: '{receiver.name}' }, body: { receiver: { params: { count: 2 } } } }),
  ],
  'DELETE /v1/receivers/:receiver_id': [notFound('receiver', '{receiver}', { path: { receiver_id: '{receiver}' } })],
  'POST /v1/receivers/:receiver_id/notify': [notFound('receiver', '{receiver.short}', { path: { receiver_id: '{receiver.short}' } })],
  // The full id of a receiver is its credential and never leaves its project (every answer is
  // searched for it). Anything else that names A's receiver is unknown, and a receiver of one's
  // own fires at one's own cluster only, with one's own objects.
  'POST /v1/webhooks/:webhook_id/trigger': [
    notFound('receiver', '{receiver.name}', { path: { webhook_id: '{receiver.name}' }, query: { V: '2' } }),
    notFound('receiver', '{receiver.short}', { path: { webhook_id: '{receiver.short}' }, query: { V: '2' } }),
    badRequest("Nodes not found: ['{node}'].", { path: { webhook_id: '{own.receiver.del}' }, query: { V: '2' }, body: { nodes: ['{node}'] } }),
    // nor can its body point it at another cluster
    badRequest("Additional properties are not allowed ('cluster_id' was unexpected)", {
      path: { webhook_id: '{own.receiver.del}' },
      query: { V: '2', cluster_id: '{cluster}' },
      body: { nodes: ['{own.node}'], cluster_id: '{cluster}' },
    }),
    badRequest("The specified policy '{policy}' could not be found.", {
      path: { webhook_id: '{own.receiver.attach}' },
      query: { V: '2' },
      body: { policy_id: '{policy}' },
    }),
  ],
};
