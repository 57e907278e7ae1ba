import { badRequest } from '@trellis/common';
import type { ApiVersion } from '../core/api-version';
import { checkKeys, isMap, type Json } from '../shared/body';
import { EnvelopedBody, FREE_MAP, ObjectBody, choice, freeMap, given, name, text } from '../shapes/request';
import { CLUSTER_ACTION_NAMES, RECEIVER_TYPES } from './receiver-actions';

/** The request bodies of /v1/receivers and of a webhook trigger. */

const ACTION_DESCRIPTION = 'A Senlin cluster action name (not CLUSTER_CREATE); Trellis webhooks run scaling, resize, check, node and policy actions.';
const action = choice(CLUSTER_ACTION_NAMES, { example: 'CLUSTER_SCALE_OUT', description: ACTION_DESCRIPTION });

export const ReceiverCreateBody = new EnvelopedBody('receiver', 'ReceiverCreate', {
  name: name({ example: 'r1' }).required(),
  type: choice(RECEIVER_TYPES, { description: 'message needs Zaqar, which Trellis does not have (500 EResourceCreation).' }).required(),
  cluster_id: text({ example: 'c1', description: 'The target cluster (required for a webhook): a UUID, a name or a short-id prefix.' }),
  action: choice(CLUSTER_ACTION_NAMES, { example: 'CLUSTER_SCALE_OUT', description: `${ACTION_DESCRIPTION} Required for a webhook.` }),
  actor: given({ ...FREE_MAP, description: 'Accepted and ignored, as Senlin: the owner is the caller.' }),
  params: freeMap({ example: { count: 1 }, description: 'The action parameters.' }),
});

export const ReceiverUpdateBody = new EnvelopedBody(
  'receiver',
  'ReceiverUpdate',
  { name: name(), action, params: freeMap() },
  { description: 'Microversion 1.7 or later; at least one changed field.', missing: "Malformed request data, missing 'receiver' key in request body." },
);

/** Documents the wrapped form; the body itself is the parameters from 1.10 or with V=2 (triggerParams). */
export const WebhookTriggerBody = new ObjectBody(
  'WebhookTriggerBody',
  { params: freeMap({ description: 'Merged over the receiver params (the body itself is the parameters from 1.10 or with V=2).' }) },
  { openKeys: true },
);

/**
 * The parameters a trigger adds over the receiver's. Senlin: with V=1 below microversion 1.10 the
 * body is `{"params": {...}}`; otherwise the body itself is the parameters. `{"params": {...}}` is
 * read as the parameters with V=2 too (no cluster action has a parameter called params).
 */
export function triggerParams(body: unknown, webhookVersion: string, version: ApiVersion): Json {
  if (body === undefined || body === null || (isMap(body) && Object.keys(body).length === 0)) return {};
  if (!isMap(body)) throw badRequest('The data provided is not a map', 'HTTPBadRequest');
  const wrapped = Object.keys(body).length === 1 && 'params' in body && (body.params === null || isMap(body.params));
  if (webhookVersion === '1' && !version.atLeast('1.10')) {
    checkKeys(body, WebhookTriggerBody.keys);
    if (!wrapped) throw badRequest(`The value for params must be a map.`);
    return (body.params as Json | null) ?? {};
  }
  return wrapped ? ((body.params as Json | null) ?? {}) : body;
}
