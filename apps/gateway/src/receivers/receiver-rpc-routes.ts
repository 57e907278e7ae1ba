import type { RpcRoute } from '../rpc/rpc-route';
import type { ReceiversService } from './receivers.service';

/**
 * The receiver patterns of the RPC transport (docs/RPC.md): each calls what the REST route calls.
 * A webhook is triggered over HTTP only: its URL is its credential, and an RPC request carries a
 * token anyway (a token holder starts the same action with `cluster.<action>`).
 */
export function receiverRpcRoutes(receivers: () => ReceiversService): Record<string, RpcRoute> {
  const only = (rule: string) => () => [rule];
  return {
    'receiver.create': {
      rest: 'POST /v1/receivers',
      path: [],
      query: false,
      body: true,
      operations: only('receivers:create'),
      run: async ({ req, body }) => ({ status: 201, body: await receivers().create(req, body) }),
    },
    'receiver.list': {
      rest: 'GET /v1/receivers',
      path: [],
      query: true,
      body: false,
      operations: only('receivers:index'),
      run: async ({ req, query }) => ({ status: 200, body: await receivers().list(req, query) }),
    },
    'receiver.show': {
      rest: 'GET /v1/receivers/{receiver_id}',
      path: ['receiver_id'],
      query: false,
      body: false,
      operations: only('receivers:get'),
      run: async ({ req, path }) => ({ status: 200, body: await receivers().get(req, path.receiver_id) }),
    },
    'receiver.update': {
      rest: 'PATCH /v1/receivers/{receiver_id}',
      path: ['receiver_id'],
      query: false,
      body: true,
      operations: only('receivers:update'),
      run: async ({ req, path, body }) => ({ status: 200, body: await receivers().update(req, path.receiver_id, body) }),
    },
    'receiver.delete': {
      rest: 'DELETE /v1/receivers/{receiver_id}',
      path: ['receiver_id'],
      query: false,
      body: false,
      operations: only('receivers:delete'),
      run: async ({ req, path }) => (await receivers().remove(req, path.receiver_id), { status: 204, body: null }),
    },
    'receiver.notify': {
      rest: 'POST /v1/receivers/{receiver_id}/notify',
      path: ['receiver_id'],
      query: false,
      body: false,
      operations: only('receivers:notify'),
      run: async ({ req, path }) => (await receivers().notify(req, path.receiver_id), { status: 204, body: null }),
    },
  };
}
