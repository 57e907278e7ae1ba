/**
 * The message shapes a Trellis RPC caller needs, copied from docs/RPC.md so this example depends on
 * nothing of Trellis: a service written in another repository would carry the same few types.
 */

/** Where requests go: exchange `trellis.rpc`, routing key `rpc.request` (queue `trellis.gateway.rpc`). */
export const RPC_EXCHANGE = 'trellis.rpc';
export const RPC_ROUTING_KEY = 'rpc.request';

/** Topic exchange of action-finished notifications, routing key `action.finished.<cluster_id>.<action_id>`. */
export const EVENTS_EXCHANGE = 'trellis.events';
export const actionFinishedKey = (clusterId: string, actionId: string) => `action.finished.${clusterId}.${actionId}`;

/** The request body; the AMQP `type` property carries the pattern (`cluster.scale_out`). */
export interface RpcRequest {
  /** a Keystone token; the project the call works on comes from it */
  token: string;
  /** the clustering microversion; 1.0 when absent */
  microversion?: string;
  /** path parameters (`cluster_id`) and query-string parameters */
  params?: Record<string, unknown>;
  /** the REST request body (for cluster actions: the action's parameters, e.g. `{"count": 2}`) */
  body?: unknown;
}

export interface RpcReplyHeaders {
  'x-openstack-request-id': string;
  'openstack-api-version'?: string;
  location?: string;
}

export interface RpcSuccess<T = unknown> {
  status: number;
  body: T;
  /** present when the call started an action; the action is stored when this reply is sent */
  action_id?: string;
  headers: RpcReplyHeaders;
}

export interface RpcFailure {
  status: number;
  error: { code: number; message: string; type: string; error_id?: string };
  headers: RpcReplyHeaders;
}

export type RpcReply<T = unknown> = RpcSuccess<T> | RpcFailure;

export const isFailure = (reply: RpcReply): reply is RpcFailure => 'error' in reply;

/** Published on `trellis.events` when an action reaches a final status. */
export interface ActionFinished {
  message_id: string;
  schema_version: number;
  action_id: string;
  correlation_id: string;
  sent_at?: string;
  cluster_id: string | null;
  /** e.g. CLUSTER_SCALE_OUT */
  action: string;
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  status_reason: string;
  project: string;
}
