import { badRequest } from '@trellis/common';
import { CLEANUP_FAILED_NODES_KEY } from '@trellis/decisions';
import { ADJUSTMENT_TYPES } from '../infra/policies.adapter';
import { isMap, mapValue, show, stringListValue, type Json } from '../shared/body';
import {
  EnvelopedBody,
  FREE_MAP,
  ObjectBody,
  OneKeyBody,
  choice,
  decimal,
  field,
  flag,
  freeMap,
  given,
  integer,
  name,
  text,
} from '../shapes/request';

/** The request bodies of /v1/clusters and /v1/clusters/{id}/actions. */

const IDENTITY = 'A UUID, a name or a short-id prefix (looked up in that order).';

/**
 * The cluster config keys Trellis reads itself must hold what it can use, so a typo is a 400 now
 * rather than a note on a failed action later. Other keys are kept as given, as Senlin does.
 */
const config = field<Json>({ ...FREE_MAP, example: {}, description: 'Cluster config, e.g. node.name.format.' }, (v, key) => {
  const map = mapValue(v, key);
  const cleanup = map[CLEANUP_FAILED_NODES_KEY];
  if (cleanup !== undefined && cleanup !== null && typeof cleanup !== 'boolean') {
    throw badRequest(`The value for config.${CLEANUP_FAILED_NODES_KEY} must be true or false: '${JSON.stringify(cleanup)}'.`);
  }
  return map;
});

export const ClusterCreateBody = new EnvelopedBody(
  'cluster',
  'ClusterCreate',
  {
    name: name({ example: 'c1' }).required(),
    profile_id: text({ example: 'p1', description: `The profile. ${IDENTITY}` }).required(),
    min_size: integer({ min: 0, max: 'maxNodesPerCluster', capacity: true }, { example: 0, description: '>= 0; default 0.' }),
    max_size: integer({ min: -1, max: 'maxNodesPerCluster', capacity: true }, { example: -1, description: '>= -1 (-1: unlimited); default -1.' }),
    desired_capacity: integer({ min: 0, max: 'maxNodesPerCluster', capacity: true }, { example: 0, description: 'Defaults to min_size if given, else 0.' }),
    timeout: integer({ min: 0 }, { nullable: true, example: null, description: 'Action timeout in seconds; default 3600.' }),
    metadata: freeMap({ example: {} }),
    config,
  },
  { description: 'name and profile_id are required.' },
);

export const ClusterUpdateBody = new EnvelopedBody(
  'cluster',
  'ClusterUpdate',
  {
    name: name({ example: 'c2' }),
    profile_id: text({ example: 'p2', description: `A new profile. ${IDENTITY}` }),
    metadata: freeMap(),
    timeout: integer({ min: 0 }),
    config,
    profile_only: flag({ description: 'Change only the profile, not the existing nodes (>= 1.6; ignored before).' }),
  },
  { missing: "Malformed request data, missing 'cluster' key in request body." },
);

/**
 * The most nodes one add_nodes or del_nodes request may name. Senlin had no bound; a cluster holds
 * at most max_nodes_per_cluster (1000 by default) nodes, so a longer list cannot be right, and each
 * name costs the lookup query a parameter.
 */
export const MAX_NODES_PER_REQUEST = 1000;

/**
 * Senlin's IdentityList for `nodes`: at least one item, all different. Senlin ran its unique-items
 * check on a string's characters (so `"node_id"` is refused as not unique); Trellis gives that
 * message for any value that is not a list.
 */
function nodeList(value: unknown, key: string): string[] {
  if (Array.isArray(value) && value.length === 0) throw badRequest(`Value for '${key}' must have at least 1 item(s).`);
  if (Array.isArray(value) && value.length > MAX_NODES_PER_REQUEST) {
    throw badRequest(`Value for '${key}' must have at most ${MAX_NODES_PER_REQUEST} item(s).`);
  }
  if (!Array.isArray(value) || new Set(value.map((v) => JSON.stringify(v))).size !== value.length) {
    throw badRequest(`Items for '${key}' must be unique`);
  }
  return stringListValue(value, key, 1);
}

const nodes = (description: string) =>
  field<string[]>(
    { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: MAX_NODES_PER_REQUEST, uniqueItems: true, example: ['node-1'], description },
    nodeList,
  ).requiredAs((_, key) => nodeList([], key));

/**
 * `replace_nodes` (>= 1.3): `{"nodes": {<old>: <new>, ...}}`, a non-empty map of distinct strings
 * (Senlin's NodeReplaceMapField).
 */
function replaceMap(value: unknown): Record<string, string> {
  if (!isMap(value) || Object.keys(value).length === 0) throw badRequest('The data provided is not a map', 'HTTPBadRequest');
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) throw badRequest(`Field \`nodes[${k}]' cannot be None`);
    map[k] = show(v);
  }
  if (new Set(Object.values(map)).size !== Object.values(map).length) throw badRequest('Map contains duplicated values');
  return map;
}

const policyId = (description: string) => text({ example: 'zp1', description }).required();

export const ScaleAction = new ObjectBody('ScaleAction', {
  count: integer(
    { min: 0 },
    { nullable: true, example: 1, description: 'Nodes to add or remove (not 0); null or absent lets the scaling policy decide.' },
  ),
});

export const ResizeAction = new ObjectBody('ResizeAction', {
  adjustment_type: choice(ADJUSTMENT_TYPES, { example: 'EXACT_CAPACITY' }),
  number: decimal({ example: 3, description: 'Required with adjustment_type.' }),
  min_size: integer({ min: 0, capacity: true }, { example: 1 }),
  max_size: integer({ min: -1, capacity: true }, { example: 5 }),
  min_step: integer({ min: 0 }, { description: 'Minimum step; kept only for CHANGE_IN_PERCENTAGE.' }),
  strict: flag({ description: 'Reject (true) or truncate (false) sizes out of range.' }).orElse(true),
});

export const PolicyAttachAction = new ObjectBody('PolicyAttachAction', {
  policy_id: policyId(`The policy. ${IDENTITY}`),
  enabled: flag().orElse(true),
});

export const PolicyDetachAction = new ObjectBody('PolicyDetachAction', { policy_id: policyId(`An attached policy. ${IDENTITY}`) });

export const PolicyUpdateAction = new ObjectBody('PolicyUpdateAction', {
  policy_id: policyId(`An attached policy. ${IDENTITY}`),
  enabled: flag({ example: false, description: 'Only enabled can change.' }).orElse(true),
});

export const AddNodesAction = new ObjectBody('AddNodesAction', { nodes: nodes('ACTIVE orphan nodes of the same profile type.') });

export const DelNodesAction = new ObjectBody('DelNodesAction', {
  nodes: nodes('Member nodes of the cluster.'),
  destroy_after_deletion: flag({ description: 'Delete the servers too (>= 1.4).' }).since('1.4'),
});

/** Its parameters are the action's inputs, as given. */
export const CheckAction = new ObjectBody('CheckAction', {}, { openKeys: true });

export const RepairAction = new ObjectBody('RepairAction', {});

/** Senlin's recovery operations (consts.RECOVERY_ACTIONS), named in any case. */
export const RECOVERY_OPERATIONS = ['REBOOT', 'REBUILD', 'RECREATE'];

/** Checked once the cluster is found (Senlin's engine checks them: an unknown cluster is a 404 whatever they are). */
export const RecoverAction = new ObjectBody(
  'RecoverAction',
  {
    operation: given({ type: 'string', enum: RECOVERY_OPERATIONS, description: 'Any case.' }),
    operation_params: given(FREE_MAP),
    check: given({ type: 'boolean' }),
    check_capacity: given({ type: 'boolean' }),
  },
  { openKeys: true },
);

export const ReplaceNodesAction = new ObjectBody(
  'ReplaceNodesAction',
  {
    nodes: field<Record<string, string>>(
      { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1, example: { 'node-1': 'node-9' }, description: 'Each member to replace, mapped to its replacement (an orphan node).' },
      replaceMap,
    ).requiredAs(replaceMap),
  },
  { openKeys: true },
);

export const CompleteLifecycleAction = new ObjectBody('CompleteLifecycleAction', {
  lifecycle_action_token: text({ description: 'The id of the action waiting for the lifecycle hook.' }).requiredAs((_, key) => {
    throw badRequest(`Field '${key}' cannot be None`, 'HTTPBadRequest');
  }),
});

/** Senlin's action body holds exactly one of these keys (its value may be null for an empty map). */
export const ClusterActionRequest = new OneKeyBody(
  'ClusterActionRequest',
  {
    scale_out: ScaleAction,
    scale_in: ScaleAction,
    resize: ResizeAction,
    policy_attach: PolicyAttachAction,
    policy_detach: PolicyDetachAction,
    policy_update: PolicyUpdateAction,
    add_nodes: AddNodesAction,
    del_nodes: DelNodesAction,
    check: CheckAction,
    repair: RepairAction,
    recover: RecoverAction,
    replace_nodes: ReplaceNodesAction,
    complete_lifecycle: CompleteLifecycleAction,
  },
  {
    none: 'No action specified',
    many: 'Multiple actions specified',
    unknown: (key) => `Unrecognized action '${key}' specified`,
    notMap: 'The data provided is not a map',
    type: 'HTTPBadRequest',
  },
  {
    scale_out: 'CLUSTER_SCALE_OUT.',
    scale_in: 'CLUSTER_SCALE_IN.',
    resize: 'CLUSTER_RESIZE.',
    policy_attach: 'CLUSTER_ATTACH_POLICY.',
    policy_detach: 'CLUSTER_DETACH_POLICY.',
    policy_update: 'CLUSTER_UPDATE_POLICY.',
    add_nodes: 'CLUSTER_ADD_NODES.',
    del_nodes: 'CLUSTER_DEL_NODES.',
    check: 'CLUSTER_CHECK: a drift check against the attached policies.',
    repair: 'CLUSTER_REPAIR: repair the open drift findings; takes no keys.',
    recover: 'CLUSTER_RECOVER.',
    replace_nodes: 'CLUSTER_REPLACE_NODES (>= 1.3).',
    complete_lifecycle: '>= 1.9: `{"lifecycle_action_token": <action id>}`; answers with that action.',
  },
);
