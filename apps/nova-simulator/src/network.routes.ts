import type { SimRequest, SimResponse } from './http-kit';
import type { IdentityStore } from './identity';
import { NETWORKS } from './simulator-state';

/**
 * A minimal Neutron v2.0 under `/network`: the shared networks of the reference cloud, listed and
 * shown so a client can check that a profile's network exists (Senlin's profile validation).
 * Servers are not attached to them: the simulator boots servers without NICs.
 */
export function handleNetwork(req: SimRequest, sub: string, identity: IdentityStore): SimResponse {
  const token = req.headers['x-auth-token'];
  if (!identity.resolve(Array.isArray(token) ? token[0] : token)) {
    return { status: 401, body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } } };
  }
  if (req.method !== 'GET') return { status: 405, body: { NeutronError: { type: 'HTTPMethodNotAllowed', message: 'The method is not allowed for the requested URL.', detail: '' } } };
  const view = (n: (typeof NETWORKS)[number]) => ({
    id: n.id,
    name: n.name,
    status: 'ACTIVE',
    admin_state_up: true,
    shared: true,
    'router:external': n.external,
    subnets: [],
    project_id: n.projectId,
    tenant_id: n.projectId,
    mtu: 1450,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  });
  const path = sub.replace(/\/+$/, '');
  if (path === '/v2.0/networks') {
    const name = req.query.get('name');
    const id = req.query.get('id');
    const matches = NETWORKS.filter((n) => (name === null || n.name === name) && (id === null || n.id === id));
    return { status: 200, body: { networks: matches.map(view) } };
  }
  const one = /^\/v2\.0\/networks\/([^/]+)$/.exec(path);
  if (one) {
    const network = NETWORKS.find((n) => n.id === one[1]);
    if (network) return { status: 200, body: { network: view(network) } };
    return { status: 404, body: { NeutronError: { type: 'NetworkNotFound', message: `Network ${one[1]} could not be found.`, detail: '' } } };
  }
  return { status: 404, body: { NeutronError: { type: 'HTTPNotFound', message: 'The resource could not be found.', detail: '' } } };
}
