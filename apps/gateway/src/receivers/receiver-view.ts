import type { ReceiverEntity } from '@trellis/persistence/entities';
import { isotime } from '../shared/views';
import { list, map, nullable, str, time, uuid, view, type OutOf } from '../shapes/response';

const NULLABLE_STRING = nullable(str());

export const ReceiverView = view('ReceiverView', {
  id: uuid({ description: "Also the webhook's credential: treat it as a secret." }),
  name: str(),
  type: str({ example: 'webhook' }),
  user: str({ description: 'Keystone user id of the owner, whom a trigger acts as.' }),
  project: str(),
  domain: NULLABLE_STRING,
  created_at: time(),
  updated_at: time(),
  cluster_id: nullable(uuid()),
  actor: map({ example: { trust_id: '4e0c...' }, description: "The owner's Keystone trust when the receiver was made." }),
  action: nullable(str({ example: 'CLUSTER_SCALE_OUT', description: 'A Senlin cluster action name.' })),
  params: map(),
  channel: map({ example: { alarm_url: 'http://trellis:8778/v1/webhooks/<id>/trigger?V=2&count=1' } }),
});
export const ReceiverEnvelope = view('ReceiverEnvelope', { receiver: ReceiverView });
export const ReceiverList = view('ReceiverList', { receivers: list(ReceiverView) });

/** Senlin's `Receiver.to_dict()`. */
export function receiverView(r: ReceiverEntity): OutOf<typeof ReceiverView> {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    user: r.user,
    project: r.project,
    domain: r.domain,
    created_at: isotime(r.created_at),
    updated_at: isotime(r.updated_at),
    cluster_id: r.cluster_id,
    actor: r.actor,
    action: r.action,
    params: r.params,
    channel: r.channel,
  };
}

/**
 * Senlin's v2 webhook URL: `<base>/v1/webhooks/<id>/trigger?V=2`, then the receiver's params sorted
 * by name as a query string (for the reader: a trigger reads the stored params, not these).
 */
export function alarmUrl(baseUrl: string, id: string, params: Record<string, unknown>): string {
  const url = `${baseUrl}/v1/webhooks/${id}/trigger?V=2`;
  const keys = Object.keys(params).sort();
  if (!keys.length) return url;
  const query = new URLSearchParams(keys.map((k): [string, string] => [k, queryValue(params[k])]));
  return `${url}&${query.toString()}`;
}

function queryValue(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
