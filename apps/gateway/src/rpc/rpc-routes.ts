import { badRequest } from '@trellis/common';
import { boolParam } from '../shared/body';
import { ActionsService } from '../actions/actions.service';
import { CLUSTER_ACTION_KEYS, ClusterActionsService } from '../clusters/cluster-actions.service';
import { ClusterPoliciesController } from '../clusters/cluster-policies.controller';
import { clusterActionOperations } from '../clusters/cluster-action-operations';
import { ClustersService } from '../clusters/clusters.service';
import { ClusterCollectService } from '../clusters/cluster-collect.service';
import { BuildInfoController } from '../build-info/build-info.controller';
import { ServicesController } from '../services/services.controller';
import { DecisionsService } from '../decisions/decisions.service';
import { EventsController } from '../events/events.controller';
import { FindingsService } from '../findings/findings.service';
import { NODE_ACTION_KEYS, NodeActionsService } from '../nodes/node-actions.service';
import { NodesService } from '../nodes/nodes.service';
import { PoliciesService } from '../policies/policies.service';
import { PolicyTypesController } from '../policies/policy-types.controller';
import { ProfileTypesController } from '../profiles/profile-types.controller';
import { ProfilesService } from '../profiles/profiles.service';
import { receiverRpcRoutes } from '../receivers/receiver-rpc-routes';
import { ReceiversService } from '../receivers/receivers.service';
import type { RpcCall, RpcResult, RpcRoute } from './rpc-route';

export type { RpcCall, RpcResult, RpcRoute } from './rpc-route';

/** What the routes call: the REST layer's services, or its controllers where the logic lives there. */
export interface RpcTargets {
  profiles: ProfilesService;
  profileTypes: ProfileTypesController;
  policies: PoliciesService;
  policyTypes: PolicyTypesController;
  clusters: ClustersService;
  clusterActions: ClusterActionsService;
  clusterCollect: ClusterCollectService;
  buildInfo: BuildInfoController;
  services: ServicesController;
  clusterPolicies: ClusterPoliciesController;
  nodes: NodesService;
  nodeActions: NodeActionsService;
  findings: FindingsService;
  actions: ActionsService;
  decisions: DecisionsService;
  events: EventsController;
  receivers: ReceiversService;
}

export { CLUSTER_ACTION_KEYS, NODE_ACTION_KEYS };

const ok = (body: unknown): RpcResult => ({ status: 200, body });
const created = (body: unknown): RpcResult => ({ status: 201, body });
const noContent = (): RpcResult => ({ status: 204, body: null });
const accepted = (body: unknown, actionId: string): RpcResult => ({ status: 202, body, actionId });

type RouteSpec = Omit<RpcRoute, 'path' | 'query' | 'body' | 'operations'> &
  Partial<Pick<RpcRoute, 'path' | 'query' | 'body'>> & { operation: string | RpcRoute['operations'] };
const route = ({ operation, ...spec }: RouteSpec): RpcRoute => ({
  path: [],
  query: false,
  body: false,
  operations: typeof operation === 'string' ? () => [operation] : operation,
  ...spec,
});

/**
 * A cluster or node action's parameters: the pattern names the action, so the body is what REST
 * nests under its key (`{"count": 2}`); the whole REST body (`{"scale_out": {"count": 2}}`) is
 * accepted too.
 */
export function clusterActionBody(key: string, body: unknown): Record<string, unknown> {
  const isMap = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (isMap && Object.keys(body).length === 1 && key in body) return body as Record<string, unknown>;
  return { [key]: body === undefined ? null : body };
}

/**
 * `dry_run`, the one query parameter of `POST /v1/clusters/{id}/actions`, read as the REST
 * controller reads it (the RPC server refused a repeated one already).
 */
function dryRunOf(query: Record<string, string | string[]>): boolean {
  for (const key of Object.keys(query)) {
    if (key !== 'dry_run') throw badRequest(`Invalid parameter '${key}'`, 'HTTPBadRequest');
  }
  return query.dry_run !== undefined && boolParam(query.dry_run, 'dry_run');
}

/**
 * Every REST operation as a message pattern `<resource>.<verb>`. Each route calls exactly what the
 * REST controller calls, so validation, errors and response bodies are the REST ones.
 */
export function rpcRoutes(t: RpcTargets): ReadonlyMap<string, RpcRoute> {
  const routes: Record<string, RpcRoute> = {
    'build_info.show': route({ operation: 'build_info:build_info', rest: 'GET /v1/build-info', run: async () => ok(t.buildInfo.show()) }),
    'service.list': route({ operation: 'services:index', rest: 'GET /v1/services', run: async ({ req }) => ok(await t.services.list(req)) }),

    'profile_type.list': route({ operation: 'profile_types:index', rest: 'GET /v1/profile-types', run: async ({ req }) => ok(t.profileTypes.list(req)) }),
    'profile_type.show': route({
      operation: 'profile_types:get',
      rest: 'GET /v1/profile-types/{type_name}',
      path: ['type_name'],
      run: async ({ req, path }) => ok(t.profileTypes.show(req, path.type_name)),
    }),
    'profile_type.ops': route({
      operation: 'profile_types:ops',
      rest: 'GET /v1/profile-types/{type_name}/ops',
      path: ['type_name'],
      run: async ({ req, path }) => ok(t.profileTypes.ops(req, path.type_name)),
    }),

    'profile.create': route({ operation: 'profiles:create', rest: 'POST /v1/profiles', body: true, run: async ({ req, body }) => created(await t.profiles.create(req, body)) }),
    'profile.list': route({ operation: 'profiles:index', rest: 'GET /v1/profiles', query: true, run: async ({ req, query }) => ok(await t.profiles.list(req, query)) }),
    'profile.show': route({
      operation: 'profiles:get',
      rest: 'GET /v1/profiles/{profile_id}',
      path: ['profile_id'],
      run: async ({ req, path }) => ok(await t.profiles.get(req, path.profile_id)),
    }),
    'profile.update': route({
      operation: 'profiles:update',
      rest: 'PATCH /v1/profiles/{profile_id}',
      path: ['profile_id'],
      body: true,
      run: async ({ req, path, body }) => ok(await t.profiles.update(req, path.profile_id, body)),
    }),
    'profile.delete': route({
      operation: 'profiles:delete',
      rest: 'DELETE /v1/profiles/{profile_id}',
      path: ['profile_id'],
      run: async ({ req, path }) => (await t.profiles.remove(req, path.profile_id), noContent()),
    }),
    'profile.validate': route({
      operation: 'profiles:validate',
      rest: 'POST /v1/profiles/validate',
      body: true,
      run: async ({ req, body }) => ok(await t.profiles.validate(req, body)),
    }),

    'policy_type.list': route({ operation: 'policy_types:index', rest: 'GET /v1/policy-types', run: async ({ req }) => ok(t.policyTypes.list(req)) }),
    'policy_type.show': route({
      operation: 'policy_types:get',
      rest: 'GET /v1/policy-types/{type_name}',
      path: ['type_name'],
      run: async ({ req, path }) => ok(t.policyTypes.show(req, path.type_name)),
    }),

    'policy.create': route({ operation: 'policies:create', rest: 'POST /v1/policies', body: true, run: async ({ req, body }) => created(await t.policies.create(req, body)) }),
    'policy.list': route({ operation: 'policies:index', rest: 'GET /v1/policies', query: true, run: async ({ req, query }) => ok(await t.policies.list(req, query)) }),
    'policy.show': route({
      operation: 'policies:get',
      rest: 'GET /v1/policies/{policy_id}',
      path: ['policy_id'],
      run: async ({ req, path }) => ok(await t.policies.get(req, path.policy_id)),
    }),
    'policy.update': route({
      operation: 'policies:update',
      rest: 'PATCH /v1/policies/{policy_id}',
      path: ['policy_id'],
      body: true,
      run: async ({ req, path, body }) => ok(await t.policies.update(req, path.policy_id, body)),
    }),
    'policy.delete': route({
      operation: 'policies:delete',
      rest: 'DELETE /v1/policies/{policy_id}',
      path: ['policy_id'],
      run: async ({ req, path }) => (await t.policies.remove(req, path.policy_id), noContent()),
    }),
    'policy.validate': route({
      operation: 'policies:validate',
      rest: 'POST /v1/policies/validate',
      body: true,
      run: async ({ req, body }) => ok(await t.policies.validateOnly(req, body)),
    }),

    'cluster.create': route({
      operation: 'clusters:create',
      rest: 'POST /v1/clusters',
      body: true,
      run: async ({ req, body }) => {
        const a = await t.clusters.create(req, body);
        return accepted(a.body, a.actionId);
      },
    }),
    'cluster.list': route({ operation: 'clusters:index', rest: 'GET /v1/clusters', query: true, run: async ({ req, query }) => ok(await t.clusters.list(req, query)) }),
    'cluster.show': route({
      operation: 'clusters:get',
      rest: 'GET /v1/clusters/{cluster_id}',
      path: ['cluster_id'],
      run: async ({ req, path }) => ok(await t.clusters.get(req, path.cluster_id)),
    }),
    'cluster.operation': route({
      operation: 'clusters:operation',
      rest: 'POST /v1/clusters/{cluster_id}/ops',
      path: ['cluster_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const actionId = await t.clusterActions.operate(req, path.cluster_id, body);
        return accepted({ action: actionId }, actionId);
      },
    }),
    'cluster.collect': route({
      operation: 'clusters:collect',
      rest: 'GET /v1/clusters/{cluster_id}/attrs/{path}',
      path: ['cluster_id', 'path'],
      run: async ({ req, path }) => ok(await t.clusterCollect.collect(req, path.cluster_id, path.path)),
    }),
    'cluster.update': route({
      operation: 'clusters:update',
      rest: 'PATCH /v1/clusters/{cluster_id}',
      path: ['cluster_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const a = await t.clusters.update(req, path.cluster_id, body);
        return accepted(a.body, a.actionId);
      },
    }),
    'cluster.delete': route({
      operation: 'clusters:delete',
      rest: 'DELETE /v1/clusters/{cluster_id}',
      path: ['cluster_id'],
      query: true,
      run: async ({ req, path, query }) => accepted(null, await t.clusters.remove(req, path.cluster_id, query)),
    }),

    'cluster_finding.list': route({
      operation: 'clusters:findings',
      rest: 'GET /v1/clusters/{cluster_id}/findings',
      path: ['cluster_id'],
      query: true,
      run: async ({ req, path, query }) => ok(await t.findings.list(req, path.cluster_id, query)),
    }),

    'cluster_policy.list': route({
      operation: 'cluster_policies:index',
      rest: 'GET /v1/clusters/{cluster_id}/policies',
      path: ['cluster_id'],
      query: true,
      run: async ({ req, path, query }) => ok(await t.clusterPolicies.list(req, path.cluster_id, query)),
    }),
    'cluster_policy.show': route({
      operation: 'cluster_policies:get',
      rest: 'GET /v1/clusters/{cluster_id}/policies/{policy_id}',
      path: ['cluster_id', 'policy_id'],
      run: async ({ req, path }) => ok(await t.clusterPolicies.show(req, path.cluster_id, path.policy_id)),
    }),

    'node.create': route({
      operation: 'nodes:create',
      rest: 'POST /v1/nodes',
      body: true,
      run: async ({ req, body }) => {
        const a = await t.nodes.create(req, body);
        return accepted(a.body, a.actionId);
      },
    }),
    'node.list': route({ operation: 'nodes:index', rest: 'GET /v1/nodes', query: true, run: async ({ req, query }) => ok(await t.nodes.list(req, query)) }),
    'node.show': route({
      operation: 'nodes:get',
      rest: 'GET /v1/nodes/{node_id}',
      path: ['node_id'],
      query: true,
      run: async ({ req, path, query }) => ok(await t.nodes.get(req, path.node_id, query)),
    }),
    'node.update': route({
      operation: 'nodes:update',
      rest: 'PATCH /v1/nodes/{node_id}',
      path: ['node_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const a = await t.nodes.update(req, path.node_id, body);
        return accepted(a.body, a.actionId);
      },
    }),
    'node.delete': route({
      operation: 'nodes:delete',
      rest: 'DELETE /v1/nodes/{node_id}',
      path: ['node_id'],
      query: true,
      run: async ({ req, path, query }) => accepted(null, await t.nodes.remove(req, path.node_id, query)),
    }),

    'node.operation': route({
      operation: 'nodes:operation',
      rest: 'POST /v1/nodes/{node_id}/ops',
      path: ['node_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const actionId = await t.nodeActions.operate(req, path.node_id, body);
        return accepted({ action: actionId }, actionId);
      },
    }),

    'action.list': route({ operation: 'actions:index', rest: 'GET /v1/actions', query: true, run: async ({ req, query }) => ok(await t.actions.list(req, query)) }),
    'action.show': route({
      operation: 'actions:get',
      rest: 'GET /v1/actions/{action_id}',
      path: ['action_id'],
      run: async ({ req, path }) => ok(await t.actions.get(req, path.action_id)),
    }),
    'action.cancel': route({
      operation: 'actions:update',
      rest: 'PATCH /v1/actions/{action_id}',
      path: ['action_id'],
      query: true,
      body: true,
      run: async ({ req, path, body, query }) => accepted(null, await t.actions.cancel(req, path.action_id, body, query)),
    }),
    'action.replay': route({
      operation: 'actions:replay',
      rest: 'POST /v1/actions/{action_id}/replay',
      path: ['action_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const replayed = await t.actions.replay(req, path.action_id, body);
        return accepted(replayed.body, replayed.id);
      },
    }),

    'action.decision': route({
      operation: 'actions:decision',
      rest: 'GET /v1/actions/{action_id}/decision',
      path: ['action_id'],
      run: async ({ req, path }) => ok(await t.decisions.decisionOf(req, path.action_id)),
    }),
    'evaluation.create': route({ operation: 'evaluations:create', rest: 'POST /v1/evaluations', body: true, run: async ({ body }) => ok(await t.decisions.evaluate(body)) }),

    'event.list': route({ operation: 'events:index', rest: 'GET /v1/events', query: true, run: async ({ req, query }) => ok(await t.events.list(req, query)) }),
    'event.show': route({
      operation: 'events:get',
      rest: 'GET /v1/events/{event_id}',
      path: ['event_id'],
      run: async ({ req, path }) => ok(await t.events.show(req, path.event_id)),
    }),
    ...receiverRpcRoutes(() => t.receivers),
  };
  for (const key of CLUSTER_ACTION_KEYS) {
    routes[`cluster.${key}`] = route({
      rest: `POST /v1/clusters/{cluster_id}/actions {"${key}": ...}`,
      operation: ({ query }) => clusterActionOperations(key, dryRunOf(query)),
      path: ['cluster_id'],
      query: true,
      body: true,
      run: async ({ req, path, query, body }) => {
        if (dryRunOf(query)) return ok(await t.clusterActions.dryRun(req, path.cluster_id, clusterActionBody(key, body)));
        const actionId = await t.clusterActions.perform(req, path.cluster_id, clusterActionBody(key, body));
        return accepted({ action: actionId }, actionId);
      },
    });
  }
  for (const key of NODE_ACTION_KEYS) {
    routes[`node.${key}`] = route({
      rest: `POST /v1/nodes/{node_id}/actions {"${key}": ...}`,
      operation: 'nodes:action',
      path: ['node_id'],
      body: true,
      run: async ({ req, path, body }) => {
        const actionId = await t.nodeActions.act(req, path.node_id, clusterActionBody(key, body));
        return accepted({ action: actionId }, actionId);
      },
    });
  }
  return new Map(Object.entries(routes));
}
