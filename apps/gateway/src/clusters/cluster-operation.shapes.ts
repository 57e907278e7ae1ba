import { operationProperties } from '../nodes/node.shapes';
import { registerComponent } from '../shapes/components';
import { badRequest } from '@trellis/common';
import { soleKey } from '../shapes/request';
import { isMap, type Json } from '../shared/body';
import { checkOperationParams, hasOperation, type ProfileType } from '../profiles/profile-type';

/** The node properties a cluster operation's `filters` may name (Senlin's cluster_op). */
export const CLUSTER_OPERATION_FILTERS = ['name', 'profile_id', 'status', 'role'] as const;

/**
 * POST /v1/clusters/{id}/ops (>= 1.4): exactly one operation of the cluster's profile type, its
 * value `params` (the operation's parameters) and `filters` (which member nodes; all without).
 * The document lists os.nova.server's operations, from the table that checks them.
 */
export const ClusterOperationRequest = {
  name: 'ClusterOperationRequest',
  ref: registerComponent('ClusterOperationRequest', {
    type: 'object',
    properties: operationProperties((description, params) => ({
      type: 'object',
      nullable: true,
      description: `${description} (openstacksdk sends the params as this map itself, without \`params\`: taken as the params)`,
      properties: {
        params: { ...params, nullable: true },
        filters: {
          type: 'object',
          nullable: true,
          description: 'Only the member nodes whose properties equal these (name, profile_id, status, role; a list: any of its values); every member without.',
          properties: Object.fromEntries(CLUSTER_OPERATION_FILTERS.map((k) => [k, { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }])),
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    })),
    minProperties: 1,
    maxProperties: 1,
    additionalProperties: false,
  }),
  /**
   * What the API layer reads (Senlin's ClusterController.operation): the operation's name and its
   * map (null: an empty one) as `{params, filters}`, before the cluster is looked up. Senlin's
   * texts, without a full stop.
   *
   * openstacksdk (`openstack cluster op --params type=HARD`) sends the params as the operation's map
   * itself, `{"reboot": {"type": "HARD"}}`, as for a node's operation; Senlin read only `params`
   * and `filters` from it and so rebooted SOFT, silently. Here a map with neither key is the
   * params; one that mixes them with other keys is refused.
   */
  pick(body: unknown): [string, Json] {
    const [operation, map] = soleKey(body, { none: 'No operation specified', many: 'Multiple operations specified' });
    const given = map[operation] ?? {};
    if (!isMap(given)) throw badRequest(`The value of '${operation}' must be a map: its params, or 'params' and 'filters'.`);
    const keys = Object.keys(given);
    const other = keys.filter((k) => k !== 'params' && k !== 'filters');
    if (other.length && other.length === keys.length) return [operation, { params: given }];
    if (other.length) throw badRequest(`Unrecognizable field(s) of '${operation}' beside 'params' and 'filters': ${other.map((k) => `'${k}'`).join(', ')}.`);
    return [operation, given];
  },

  /**
   * What the engine's service checks once the cluster is found (Senlin's cluster_op, in its order):
   * the profile type has the operation, the params fit it (none: {}), the filters name node
   * properties, each a string or a list of strings (any of them).
   */
  check(type: ProfileType | undefined, typeName: string, operation: string, given: Json): { params: Record<string, unknown>; filters: Record<string, string[]> } {
    if (!type || !hasOperation(type, operation)) {
      throw badRequest(`The requested operation '${operation}' is not supported by the profile type '${typeName}'.`);
    }
    const raw = given.params;
    const params = raw === undefined || raw === null || (isMap(raw) && !Object.keys(raw).length) ? {} : checkOperationParams(type, operation, raw);
    const f = given.filters;
    if (f !== undefined && f !== null && !isMap(f)) throw badRequest('The filters provided is not a map.');
    const asked = isMap(f) ? f : {};
    const errors = Object.keys(asked)
      .filter((k) => !(CLUSTER_OPERATION_FILTERS as readonly string[]).includes(k))
      .map((k) => `Filter key '${k}' is unsupported`);
    if (errors.length) throw badRequest(errors.join('\n'));
    const filters: Record<string, string[]> = {};
    for (const key of CLUSTER_OPERATION_FILTERS) {
      if (!(key in asked)) continue;
      const values = Array.isArray(asked[key]) ? (asked[key] as unknown[]) : [asked[key]];
      if (!values.every((v) => typeof v === 'string')) throw badRequest(`The filter '${key}' must be a string or a list of strings.`);
      filters[key] = values as string[];
    }
    return { params, filters };
  },
};
