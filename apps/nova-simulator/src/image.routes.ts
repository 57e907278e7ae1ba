import type { SimRequest, SimResponse } from './http-kit';
import type { IdentityStore } from './identity';
import { IMAGES } from './simulator-state';

/**
 * A minimal Glance v2 under `/image`: the reference cloud's image and a second one, so a client can
 * turn an image name from a profile into the `imageRef` UUID that Nova requires.
 */
export function handleImage(req: SimRequest, sub: string, identity: IdentityStore): SimResponse {
  const token = req.headers['x-auth-token'];
  if (!identity.resolve(Array.isArray(token) ? token[0] : token)) {
    return { status: 401, body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } } };
  }
  if (req.method !== 'GET') return { status: 405, body: { error: { code: 405, title: 'Method Not Allowed', message: 'The method is not allowed for the requested URL.' } } };
  const view = (image: (typeof IMAGES)[number]) => ({
    id: image.id,
    name: image.name,
    status: 'active',
    visibility: 'public',
    disk_format: 'raw',
    container_format: 'bare',
    size: 1024,
    min_disk: 0,
    min_ram: 0,
    protected: false,
    tags: [],
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    self: `/v2/images/${image.id}`,
    file: `/v2/images/${image.id}/file`,
    schema: '/v2/schemas/image',
  });
  const path = sub.replace(/\/+$/, '');
  if (path === '/v2/images') {
    const name = req.query.get('name');
    const id = req.query.get('id');
    const images = IMAGES.filter((image) => (name === null || name === image.name) && (id === null || id === image.id));
    return { status: 200, body: { images: images.map(view), first: '/v2/images', schema: '/v2/schemas/images' } };
  }
  const one = /^\/v2\/images\/([^/]+)$/.exec(path);
  if (one) {
    const image = IMAGES.find((i) => i.id === one[1]);
    if (image) return { status: 200, body: view(image) };
    return { status: 404, body: `404 Not Found\n\nNo image found with ID ${one[1]}\n\n` };
  }
  return { status: 404, body: `404 Not Found\n\nThe resource could not be found.\n\n` };
}
