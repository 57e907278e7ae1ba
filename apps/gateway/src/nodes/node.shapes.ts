import type { SchemaObject } from '@nestjs/swagger';
import { RECOVERY_OPERATIONS } from '../clusters/cluster.shapes';
import type { OperationParam } from '../profiles/profile-type';
import { SERVER_OPERATIONS } from '../profiles/nova-server.operations';
import { registerComponent } from '../shapes/components';
import { EnvelopedBody, FREE_MAP, ObjectBody, OneKeyBody, flag, freeMap, given, name, soleKey, text } from '../shapes/request';

/** The request bodies of /v1/nodes and its actions and operations. */

const IDENTITY = 'A UUID, a name or a short-id prefix (looked up in that order).';

export const NodeCreateBody = new EnvelopedBody('node', 'NodeCreate', {
  name: name({ example: 'n1' }).required(),
  profile_id: text({ example: 'p1', description: `The profile. ${IDENTITY}` }).required(),
  cluster_id: text({ example: 'c1', description: `Join this cluster (profile types must match). ${IDENTITY}` }),
  role: text({ example: 'worker' }),
  metadata: freeMap({ example: {} }),
});

export const NodeUpdateBody = new EnvelopedBody(
  'node',
  'NodeUpdate',
  {
    name: name(),
    profile_id: text({ description: IDENTITY }),
    role: text(),
    metadata: freeMap(),
    tainted: flag({ description: '>= 1.13.' }).since('1.13'),
  },
  { missing: "Malformed request data, missing 'node' key in request body." },
);

/** Checked once the node is found (Senlin's node_recover), in node-actions.service.ts. */
export const NodeRecoverParams = new ObjectBody(
  'NodeRecoverParams',
  {
    operation: given({ type: 'string', enum: RECOVERY_OPERATIONS, description: 'Any case. RECREATE is not run by the nova-worker.' }),
    operation_params: given({ ...FREE_MAP, example: { type: 'HARD' }, description: 'With operation; for REBOOT, `type` SOFT or HARD (default HARD).' }),
    check: given({ type: 'boolean' }),
    delete_timeout: given({ type: 'integer' }),
    force_recreate: given({ type: 'boolean' }),
  },
  { openKeys: true },
);

/** POST /v1/nodes/{id}/actions: exactly one key. */
export const NodeActionRequest = new OneKeyBody(
  'NodeActionRequest',
  { check: new ObjectBody('NodeCheckParams', {}, { openKeys: true }), recover: NodeRecoverParams },
  {
    none: 'No action specified.',
    many: 'Multiple actions specified.',
    unknown: (key) => `Unrecognized action '${key}' specified`,
    notMap: 'The params provided is not a map.',
  },
  { check: 'NODE_CHECK: is the server still there and ACTIVE?', recover: 'NODE_RECOVER.' },
);

function paramSchema(p: OperationParam): SchemaObject {
  const schema: SchemaObject =
    (p.type ?? 'String') === 'Integer' ? { oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^-?\\d+$' }] } : { type: 'string' };
  return { ...schema, description: p.description, ...(p.default === undefined ? {} : { default: p.default }), ...(p.allowed ? { enum: p.allowed } : {}) };
}

/**
 * os.nova.server's operations (the table that checks them) as a request body's properties, each
 * an object `shape` makes of the operation's description and its parameters' schema.
 */
export function operationProperties(shape: (description: string, params: SchemaObject) => SchemaObject): Record<string, SchemaObject> {
  return Object.fromEntries(
    Object.entries(SERVER_OPERATIONS).map(([op, { description, parameters }]) => [
      op,
      shape(description, {
        type: 'object',
        properties: Object.fromEntries(Object.entries(parameters).map(([k, p]) => [k, paramSchema(p)])),
        additionalProperties: false,
      }),
    ]),
  );
}

/**
 * POST /v1/nodes/{id}/ops (>= 1.4): exactly one operation of the node's profile type, its value the
 * parameters. The document lists os.nova.server's operations, from the table that checks them.
 */
export const NodeOperationRequest = {
  name: 'NodeOperationRequest',
  ref: registerComponent('NodeOperationRequest', {
    type: 'object',
    properties: operationProperties((description, params) => ({ ...params, nullable: true, description })),
    minProperties: 1,
    maxProperties: 1,
    additionalProperties: false,
  }),
  /** The operation's name and the whole body; the name is judged against the node's profile type. */
  pick: (body: unknown) => soleKey(body, { none: 'No operation specified.', many: 'Multiple operations specified.' }),
};
