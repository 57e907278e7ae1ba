import type { ReceiverEntity } from '@trellis/persistence/entities';
import { isotime } from '../shared/views';

/** Senlin's `Receiver.to_dict()`. */
export function receiverView(r: ReceiverEntity) {
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
