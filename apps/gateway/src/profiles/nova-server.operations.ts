import { badRequest } from '@trellis/common';
import { isMap } from '../shared/body';

/**
 * The operations of os.nova.server-1.0 (Senlin's ServerProfile.OPERATIONS): what
 * GET /v1/profile-types/{type}/ops lists and POST /v1/nodes/{id}/ops accepts; the nova-worker
 * runs them as Nova server actions.
 */
interface Param {
  description: string;
  default?: string;
  allowed?: string[];
}
interface Op {
  description: string;
  parameters: Record<string, Param>;
}

const OPERATIONS: Record<string, Op> = {
  reboot: {
    description: 'Reboot the nova server.',
    parameters: { type: { description: "Type of reboot which can be 'SOFT' or 'HARD'.", default: 'SOFT', allowed: ['SOFT', 'HARD'] } },
  },
  rebuild: { description: 'Rebuild the server using current image and admin password.', parameters: {} },
  change_password: {
    description: 'Change the administrator password.',
    parameters: { admin_pass: { description: 'New password for the administrator.' } },
  },
  pause: { description: 'Pause the server from running.', parameters: {} },
  unpause: { description: 'Unpause the server to running state.', parameters: {} },
  suspend: { description: 'Suspend the running of the server.', parameters: {} },
  resume: { description: 'Resume the running of the server.', parameters: {} },
  lock: { description: 'Lock the server.', parameters: {} },
  unlock: { description: 'Unlock the server.', parameters: {} },
  start: { description: 'Start the server.', parameters: {} },
  stop: { description: 'Stop the server.', parameters: {} },
  rescue: { description: 'Rescue the server.', parameters: { image_ref: { description: 'A string referencing the image to use.' } } },
  unrescue: { description: 'Unrescue the server.', parameters: {} },
  evacuate: {
    description: 'Evacuate the server to a different host.',
    parameters: {
      host: { description: 'The target host to evacuate the server.' },
      force: { description: 'Whether the evacuation should be a forced one.' },
    },
  },
};

/** Senlin's rendering of the operations (schema.Operation as a map). */
export function renderOperations(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(OPERATIONS)) {
    const parameters: Record<string, unknown> = {};
    for (const [p, s] of Object.entries(op.parameters)) {
      parameters[p] = {
        type: 'String',
        description: s.description,
        ...(s.default !== undefined ? { default: s.default } : {}),
        required: false,
        ...(s.allowed ? { constraints: [{ type: 'AllowedValues', constraint: s.allowed }] } : {}),
      };
    }
    out[name] = { description: op.description, parameters };
  }
  return out;
}

export const isServerOperation = (name: string): boolean => Object.prototype.hasOwnProperty.call(OPERATIONS, name);

/** Senlin's Operation.validate of an operation's params, with its messages (as 400s). */
export function checkOperationParams(name: string, params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (!isMap(params)) throw badRequest('The params provided is not a map.');
  const schema = OPERATIONS[name].parameters;
  for (const key of Object.keys(params)) {
    if (!Object.prototype.hasOwnProperty.call(schema, key)) throw badRequest(`Unrecognizable parameter '${key}'.`);
  }
  for (const [key, s] of Object.entries(schema)) {
    if (!(key in params)) continue;
    const value = params[key];
    if (typeof value !== 'string') throw badRequest('value is not a string.');
    if (s.allowed && !s.allowed.includes(value)) throw badRequest(`'${value}' must be one of the allowed values: ${s.allowed.join(', ')}.`);
  }
  return { ...params };
}
