import { badRequest } from '@trellis/common';
import { registerComponent } from '../shapes/components';
import { EnvelopedBody, given } from '../shapes/request';
import { oneOf, str, uuid, view } from '../shapes/response';

/** The request bodies of /v1/actions, and the answer of a replay. */

const MISSING = "Malformed request data, missing 'action' key in request body.";

/** PATCH /v1/actions/{id} (>= 1.12): the status is judged once the action is found (Senlin's messages name it). */
export const ActionUpdateBody = new EnvelopedBody(
  'action',
  'ActionUpdate',
  { status: given<unknown>({ type: 'string', enum: ['CANCELLED'], description: 'The only status an action can be set to: cancel it.' }).required() },
  { missing: MISSING, notMap: MISSING, openKeys: true },
);

/** POST /v1/actions/{id}/replay takes no body, or an empty object. */
export const ReplayBody = {
  name: 'ReplayRequest',
  ref: registerComponent('ReplayRequest', { type: 'object', maxProperties: 0, nullable: true, description: 'No body, or an empty object.' }),
  check(body: unknown): void {
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length)) {
      throw badRequest('The replay request takes no body.');
    }
  },
};

export const ActionReplayed = view('ActionReplayed', {
  action: uuid(),
  status: oneOf(['READY', 'RUNNING']),
  cause: str({ example: 'replay' }),
  message_id: str(),
  correlation_id: str(),
});
