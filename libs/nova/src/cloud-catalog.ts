import type { CatalogAnswer, CloudCatalog, OpenStackSettings } from '@trellis/common';
import { createSession, type HttpResponse, type KeystoneClientOptions, type KeystoneSession, type OpenStackService } from '@trellis/identity';
import * as shape from './normalise';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * The CloudCatalog over HTTP, as Senlin's server profile validated a spec (openstacksdk's
 * find_image, find_flavor, and its own network_get): an id is looked up, then a name. The
 * endpoints come from the catalog of Trellis's own token (they are the cloud's public endpoints);
 * every request carries the caller's token, so Glance, Nova and Neutron answer for the caller's
 * project. A catalog without an image or network service leaves those names unchecked.
 */
export class KeystoneCloudCatalog implements CloudCatalog {
  constructor(private readonly session: KeystoneSession) {}

  async findImage(userToken: string, ref: string): Promise<CatalogAnswer> {
    const glance = await this.session.optionalEndpoint('image');
    if (glance === null) return 'unchecked';
    const base = `${glance.replace(/\/+$/, '').replace(/\/v2$/, '')}/v2/images`;
    if (UUID.test(ref) && (await this.get('image', 'images.get', userToken, `${base}/${encodeURIComponent(ref)}`)).status === 200) return 'found';
    const list = await this.get('image', 'images.list', userToken, `${base}?${new URLSearchParams({ name: ref })}`);
    return this.items(list, 'images').length > 0 ? 'found' : 'missing';
  }

  async findFlavor(userToken: string, ref: string): Promise<CatalogAnswer> {
    const nova = (await this.session.endpoint('compute')).replace(/\/+$/, '');
    if ((await this.get('compute', 'flavors.get', userToken, `${nova}/flavors/${encodeURIComponent(ref)}`)).status === 200) return 'found';
    const list = await this.get('compute', 'flavors.list', userToken, `${nova}/flavors?is_public=None`);
    return this.items(list, 'flavors').some((f) => shape.object(f, 'flavor').name === ref) ? 'found' : 'missing';
  }

  /** Senlin's network_get: an id-like reference is found by id (then by name), a name by name. */
  async findNetwork(userToken: string, ref: string): Promise<CatalogAnswer> {
    const neutron = await this.session.optionalEndpoint('network');
    if (neutron === null) return 'unchecked';
    const root = neutron.replace(/\/+$/, '');
    const base = `${root.endsWith('/v2.0') ? root : `${root}/v2.0`}/networks`;
    if (UUID.test(ref) && (await this.get('network', 'networks.get', userToken, `${base}/${encodeURIComponent(ref)}`)).status === 200) return 'found';
    const list = await this.get('network', 'networks.list', userToken, `${base}?${new URLSearchParams({ name: ref })}`);
    return this.items(list, 'networks').length > 0 ? 'found' : 'missing';
  }

  private get(service: OpenStackService, operation: string, userToken: string, url: string): Promise<HttpResponse> {
    return this.session.transport.send({ service, operation, method: 'GET', url, headers: { 'X-Auth-Token': userToken }, accept: [404], idempotent: true });
  }

  private items(response: HttpResponse, key: string): unknown[] {
    if (response.status === 404) return [];
    return shape.array(shape.object(response.body, 'body')[key], key);
  }
}

export function createCloudCatalog(settings: OpenStackSettings, options: KeystoneClientOptions = {}): KeystoneCloudCatalog {
  return new KeystoneCloudCatalog(createSession(settings, options).session);
}
