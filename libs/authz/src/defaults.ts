import type { RuleDefault } from './enforcer';

/**
 * OpenStack's "consistent and secure RBAC" personas. Keystone usually lists implied roles in the
 * token (admin implies member implies reader), but a deployment without those implications is
 * common, so each persona accepts every stronger role too.
 */
export const BASE_RULES: readonly RuleDefault[] = [
  {
    name: 'cloud_admin',
    check: '(role:admin and is_admin_project:True) or (role:admin and system_scope:all)',
    description:
      'The cloud administrator: the admin role in the admin project (TRELLIS_ADMIN_PROJECT) or on a system-scoped token. ' +
      'Reads and acts across projects (global_project=true, action replay).',
  },
  {
    name: 'project_admin',
    check: 'role:admin and project_id:%(project_id)s',
    description: "An administrator of the object's project (not of the cloud).",
  },
  {
    name: 'project_member',
    check: '(role:member or role:admin) and project_id:%(project_id)s',
    description: "Creates, changes, deletes and runs actions in the object's project.",
  },
  {
    name: 'project_reader',
    check: '(role:reader or role:member or role:admin) and project_id:%(project_id)s',
    description: "Reads the object's project.",
  },
  { name: 'context_is_admin', check: 'rule:cloud_admin', description: "Senlin's name for the administrator." },
  { name: 'deny_everybody', check: '!', description: 'Nobody (Senlin base rule).' },
];

const READ = 'rule:project_reader or rule:cloud_admin';
const WRITE = 'rule:project_member';
const CLOUD_ADMIN = 'rule:cloud_admin';

const op = (name: string, check: string, description: string, method: string, path: string): RuleDefault => ({
  name,
  check,
  description,
  operations: [{ method, path }],
});

/**
 * One rule per API operation, with Senlin's names (senlin/common/policies/*.py) and Trellis's own
 * operations beside them. Senlin operations Trellis does not serve (receivers, webhooks, node
 * actions, ...) keep their rule so that a Senlin policy file loads unchanged.
 */
export const OPERATION_RULES: readonly RuleDefault[] = [
  op('build_info:build_info', READ, 'Show build information.', 'GET', '/v1/build-info'),
  op('profile_types:index', READ, 'List profile types.', 'GET', '/v1/profile-types'),
  op('profile_types:get', READ, 'Show a profile type.', 'GET', '/v1/profile-types/{type_name}'),
  op('profile_types:ops', READ, "List a profile type's operations.", 'GET', '/v1/profile-types/{type_name}/ops'),
  op('policy_types:index', READ, 'List policy types.', 'GET', '/v1/policy-types'),
  op('policy_types:get', READ, 'Show a policy type.', 'GET', '/v1/policy-types/{type_name}'),

  op('profiles:index', READ, 'List profiles.', 'GET', '/v1/profiles'),
  op('profiles:create', WRITE, 'Create a profile.', 'POST', '/v1/profiles'),
  op('profiles:get', READ, 'Show a profile.', 'GET', '/v1/profiles/{profile_id}'),
  op('profiles:update', WRITE, 'Update a profile.', 'PATCH', '/v1/profiles/{profile_id}'),
  op('profiles:delete', WRITE, 'Delete a profile.', 'DELETE', '/v1/profiles/{profile_id}'),
  op('profiles:validate', WRITE, 'Validate a profile spec (stores nothing).', 'POST', '/v1/profiles/validate'),

  op('policies:index', READ, 'List policies.', 'GET', '/v1/policies'),
  op('policies:create', WRITE, 'Create a policy.', 'POST', '/v1/policies'),
  op('policies:get', READ, 'Show a policy.', 'GET', '/v1/policies/{policy_id}'),
  op('policies:update', WRITE, 'Update a policy.', 'PATCH', '/v1/policies/{policy_id}'),
  op('policies:delete', WRITE, 'Delete a policy.', 'DELETE', '/v1/policies/{policy_id}'),
  op('policies:validate', WRITE, 'Validate a policy spec (stores nothing).', 'POST', '/v1/policies/validate'),

  op('clusters:index', READ, 'List clusters.', 'GET', '/v1/clusters'),
  op('clusters:create', WRITE, 'Create a cluster.', 'POST', '/v1/clusters'),
  op('clusters:get', READ, 'Show a cluster.', 'GET', '/v1/clusters/{cluster_id}'),
  op('clusters:update', WRITE, 'Update a cluster.', 'PATCH', '/v1/clusters/{cluster_id}'),
  op('clusters:delete', WRITE, 'Delete a cluster.', 'DELETE', '/v1/clusters/{cluster_id}'),
  op(
    'clusters:action',
    WRITE,
    'Run an action on a cluster (scale_out, scale_in, resize, add_nodes, del_nodes, check, policy_attach, policy_detach, policy_update, repair).',
    'POST',
    '/v1/clusters/{cluster_id}/actions',
  ),
  op('clusters:collect', READ, 'Collect an attribute of the nodes of a cluster.', 'GET', '/v1/clusters/{cluster_id}/attrs/{path}'),
  op('clusters:operation', WRITE, "Run a profile operation on the servers of a cluster's members (CLUSTER_OPERATION).", 'POST', '/v1/clusters/{cluster_id}/ops'),
  op(
    'clusters:dry_run',
    WRITE,
    'Ask what the engine would decide for a cluster action, changing nothing (checked instead of clusters:action).',
    'POST',
    '/v1/clusters/{cluster_id}/actions?dry_run=true',
  ),
  op(
    'clusters:repair',
    WRITE,
    'Repair the open drift findings of a cluster (checked together with clusters:action).',
    'POST',
    '/v1/clusters/{cluster_id}/actions {"repair": {}}',
  ),
  op('clusters:findings', READ, 'List the drift findings of a cluster.', 'GET', '/v1/clusters/{cluster_id}/findings'),

  op('cluster_policies:index', READ, 'List the policies attached to a cluster.', 'GET', '/v1/clusters/{cluster_id}/policies'),
  op('cluster_policies:get', READ, "Show a policy's binding to a cluster.", 'GET', '/v1/clusters/{cluster_id}/policies/{policy_id}'),
  op(
    'cluster_policies:attach',
    WRITE,
    'Attach a policy to a cluster (checked together with clusters:action).',
    'POST',
    '/v1/clusters/{cluster_id}/actions {"policy_attach": ...}',
  ),
  op(
    'cluster_policies:detach',
    WRITE,
    'Detach a policy from a cluster (checked together with clusters:action).',
    'POST',
    '/v1/clusters/{cluster_id}/actions {"policy_detach": ...}',
  ),
  op(
    'cluster_policies:update',
    WRITE,
    "Change a policy's binding to a cluster (checked together with clusters:action).",
    'POST',
    '/v1/clusters/{cluster_id}/actions {"policy_update": ...}',
  ),

  op('nodes:index', READ, 'List nodes.', 'GET', '/v1/nodes'),
  op('nodes:create', WRITE, 'Create a node.', 'POST', '/v1/nodes'),
  op('nodes:get', READ, 'Show a node.', 'GET', '/v1/nodes/{node_id}'),
  op('nodes:update', WRITE, 'Update a node.', 'PATCH', '/v1/nodes/{node_id}'),
  op('nodes:delete', WRITE, 'Delete a node.', 'DELETE', '/v1/nodes/{node_id}'),
  op('nodes:action', WRITE, 'Check or recover a node.', 'POST', '/v1/nodes/{node_id}/actions'),
  op('nodes:operation', WRITE, 'Run a profile operation (reboot, stop, ...) on a node.', 'POST', '/v1/nodes/{node_id}/ops'),
  op('nodes:adopt', WRITE, 'Adopt an existing server as a node (not served by Trellis).', 'POST', '/v1/nodes/adopt'),
  op('nodes:adopt_preview', WRITE, 'Preview adopting a server (not served by Trellis).', 'POST', '/v1/nodes/adopt-preview'),

  op('actions:index', READ, 'List actions.', 'GET', '/v1/actions'),
  op('actions:get', READ, 'Show an action.', 'GET', '/v1/actions/{action_id}'),
  op('actions:update', WRITE, 'Cancel an action.', 'PATCH', '/v1/actions/{action_id}'),
  op('actions:replay', CLOUD_ADMIN, 'Announce a READY or RUNNING action again, in any project.', 'POST', '/v1/actions/{action_id}/replay'),
  op('actions:decision', READ, "Show an action's decision record (input, output, plan, trace).", 'GET', '/v1/actions/{action_id}/decision'),
  op('evaluations:create', WRITE, 'Evaluate a decision snapshot, changing nothing.', 'POST', '/v1/evaluations'),

  op('events:index', READ, 'List events.', 'GET', '/v1/events'),
  op('events:get', READ, 'Show an event.', 'GET', '/v1/events/{event_id}'),

  op('receivers:index', READ, 'List receivers.', 'GET', '/v1/receivers'),
  op('receivers:create', WRITE, 'Create a webhook receiver.', 'POST', '/v1/receivers'),
  op('receivers:get', READ, 'Show a receiver.', 'GET', '/v1/receivers/{receiver_id}'),
  op('receivers:update', WRITE, 'Update a receiver.', 'PATCH', '/v1/receivers/{receiver_id}'),
  op('receivers:delete', WRITE, 'Delete a receiver.', 'DELETE', '/v1/receivers/{receiver_id}'),
  op('receivers:notify', WRITE, 'Notify a message receiver (Trellis has none: 400 for a webhook receiver).', 'POST', '/v1/receivers/{receiver_id}/notify'),
  op('webhooks:trigger', WRITE, 'Trigger a webhook receiver: checked with the receiver owner\'s delegated roles, as the route carries no token.', 'POST', '/v1/webhooks/{webhook_id}/trigger'),
  op('services:index', CLOUD_ADMIN, 'List the running Trellis services (gateway, policy-engine, nova-worker).', 'GET', '/v1/services'),
];

/** Every rule Trellis knows, base rules first. */
export const DEFAULT_RULES: readonly RuleDefault[] = [...BASE_RULES, ...OPERATION_RULES];
